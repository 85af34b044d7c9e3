package service_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// A dossier cites an e-mail: 1:1 mail with the person synced into the
// index (internal/mail/mailindex) is evidence like their messages, cited
// as "mail:Account/Path#UID"; mail they were only copied on is not, and a
// code in the mail never reaches the dossier.
func TestDossierCitesAnEmail(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	before, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Jamie Lee"})
	if err != nil {
		t.Fatal(err)
	}
	box, err := env.Index.MailResetMailbox(ctx, "Work", "INBOX", 1)
	if err != nil {
		t.Fatal(err)
	}
	at := servicetest.Now.Add(-2 * time.Hour)
	jamie := []index.MailAddress{{Name: "Jamie Lee", Addr: servicetest.JamieLeeEmail}}
	me := []index.MailAddress{{Addr: "me@example.org"}}
	msgs := []index.MailMessage{
		{UID: 1, Date: at, Subject: "Contract", From: jamie, To: me, Text: "I will send you the signed contract by Friday. Code 482913 is my door code."},
		{UID: 2, Date: at.Add(time.Minute), Subject: "Team", From: jamie, To: me, Cc: []index.MailAddress{{Addr: "someone@else.example"}}, Text: "Group note, not 1:1."},
	}
	if _, err := env.Index.MailPut(ctx, box, msgs, 2, []string{"me@example.org"}); err != nil {
		t.Fatal(err)
	}
	d, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Jamie Lee", Rebuild: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Messages != before.Messages+1 {
		t.Fatalf("dossier built from %d messages, want %d (the 1:1 mail added)", d.Messages, before.Messages+1)
	}
	var sources []string
	for _, c := range slices.Concat(d.Active, d.Past, d.Resolved) {
		sources = append(sources, c.Sources...)
	}
	if !slices.Contains(sources, "mail:Work/INBOX#1") {
		t.Fatalf("no commitment cites the mail: %q", sources)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(raw); strings.Contains(b, "482913") || strings.Contains(b, "Group note") {
		t.Fatalf("the dossier holds a code or a group mail: %s", b)
	}
}
