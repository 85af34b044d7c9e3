package service_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// Regression tests for leaks the red team found in the query layer (the
// full attack tables run over MCP in internal/mcpserver/redteam_test.go).

// mustNotContain fails when v's JSON holds one of tokens.
func mustNotContain(t *testing.T, what string, v any, tokens ...string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	low := strings.ToLower(string(b))
	for _, tok := range tokens {
		if strings.Contains(low, strings.ToLower(tok)) {
			t.Errorf("%s carries %q", what, tok)
		}
	}
}

// TestRedTeamPersonAcrossHandles: blocking a person's number hides the
// thread with the e-mail address on their card, in every reference form;
// the number written with Unicode digits is the same number.
func TestRedTeamPersonAcrossHandles(t *testing.T) {
	for _, blockFirst := range []bool{true, false} {
		opts := servicetest.Options{NoEmbed: true}
		if !blockFirst {
			opts.Blocked = []string{}
		}
		env := servicetest.RedTeam(t, opts)
		if !blockFirst {
			if _, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "zanzi@sentinel.example"}); err != nil {
				t.Fatalf("the e-mail thread is not readable before the block: %v", err)
			}
			servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
		}
		for _, ref := range []string{"zanzi@sentinel.example", "iMessage;-;zanzi@sentinel.example", "\uff0b\uff11 415\u2011555\u20110002", "SMS;-;\uff0b\uff11 415\u2011555\u20110002"} {
			_, err := env.Service.Messages(ctx, service.MessagesParams{Chat: ref})
			if !errors.Is(err, service.ErrNotFound) {
				t.Errorf("blockFirst=%v: Messages(%q) = %v, want not found", blockFirst, ref, err)
			}
		}
		l, err := env.Service.ListConversations(ctx, service.ListParams{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "the listing", l, "Zanzisentinel", "zanzi@", "555\u2011")
	}
}

// TestRedTeamPurgeLeavesNoText: a thread blocked after it was indexed
// leaves no trace of its text in index.db.
func TestRedTeamPurgeLeavesNoText(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true, Blocked: []string{}})
	if _, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "zanzi@sentinel.example"}); err != nil {
		t.Fatal(err)
	}
	servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	if _, err := env.Service.ListConversations(ctx, service.ListParams{}); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		data, _ := os.ReadFile(filepath.Join(env.Home, "index.db"+suffix))
		for _, tok := range []string{servicetest.SecondHandleSentinel, servicetest.FormattedHandleSentinel, "QZXSENTINELBODY"} {
			if strings.Contains(string(data), tok) {
				t.Errorf("index.db%s still holds %s", suffix, tok)
			}
		}
	}
}

// TestRedTeamBlockedAuthors: a blocked person's words are left out of
// threads the policy allows — the group they left, a row chat.db joins to
// their thread and another, their reactions, group events about them — in
// history, search, search context, triage and dossiers; a page whose
// messages are all theirs still continues with a cursor.
func TestRedTeamBlockedAuthors(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	tokens := []string{servicetest.FormerMemberSentinel, servicetest.TwoChatSentinel, "Zanzisentinel", "+14155550002"}
	pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: servicetest.FormerGroupID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "the group they left", pg, tokens...)
	if len(pg.Messages) != 1 || pg.Messages[0].ID != "rt-former-2" || len(pg.Messages[0].Reactions) != 0 {
		t.Errorf("the group they left = %+v, want only rt-former-2 without their reaction", pg.Messages)
	}
	// Newest first, one at a time: the leave event (hidden) fills the
	// first page alone, which still continues to the visible message.
	seen := []string{}
	cursor := ""
	for range 5 {
		p, err := env.Service.Messages(ctx, service.MessagesParams{Chat: servicetest.FormerGroupID, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "a page of the group", p, tokens...)
		for _, m := range p.Messages {
			seen = append(seen, m.ID)
		}
		if !p.More {
			break
		}
		if p.NextCursor == "" {
			t.Fatal("more messages but no cursor")
		}
		cursor = p.NextCursor
	}
	if strings.Join(seen, ",") != "rt-former-2" {
		t.Errorf("paging one by one saw %v, want [rt-former-2]", seen)
	}
	alex, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Alex Hostile", Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "Alex's thread", alex, tokens...)
	for _, q := range []service.SearchParams{
		{Query: "SENTINEL", Mode: "substring", Limit: 100, Context: 5},
		{Query: "book", Mode: "fulltext", Limit: 100, Context: 5},
		{Query: "chats", Mode: "substring", Context: 5},
	} {
		r, err := env.Service.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "search "+q.Query, r, tokens...)
	}
	rv, err := env.Service.Review(ctx, service.ReviewParams{Days: 90, Context: 10})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "the review", rv, tokens...)
	d, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Alex Hostile"})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "Alex's dossier", d, tokens...)
}

// TestRedTeamDossierRebuiltAfterBlock: a dossier stored before someone was
// blocked holds their words when they wrote in its conversations; the
// policy change purges it, and the rebuilt one leaves them out.
func TestRedTeamDossierRebuiltAfterBlock(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true, Blocked: []string{}})
	d, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Alex Hostile"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	if !d.Stored || !strings.Contains(string(b), "rt-two-chats") {
		t.Fatalf("before the block the dossier (stored %v) does not cite the row in two chats", d.Stored)
	}
	servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	d, err = env.Service.Dossier(ctx, service.DossierParams{ContactID: "Alex Hostile"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Rebuilt {
		t.Error("the dossier was not rebuilt after the policy changed")
	}
	mustNotContain(t, "Alex's dossier after the block", d, servicetest.TwoChatSentinel, "rt-two-chats")
}

// TestRedTeamReviewReasonsQuote: a contact name with a quotation mark
// does not open a hole in the removal of quoted message text from the
// triage reasons (the card number in the question stayed in clear).
func TestRedTeamReviewReasonsQuote(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	rv, err := env.Service.Review(ctx, service.ReviewParams{Days: 1, Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "the review", rv, servicetest.QuoteCard, "4111")
	found := false
	for _, e := range rv.NeedsReply {
		if e.ChatID == servicetest.QuoteNameEmail {
			found = true
			if r := strings.Join(e.Reasons, " "); !strings.Contains(r, "“…”") || !strings.Contains(r, "Bo") {
				t.Errorf("reasons %q: want the asker's name and the elided quote", r)
			}
		}
	}
	if !found {
		t.Errorf("the question from %s is not in needs_reply: %+v", servicetest.QuoteNameEmail, rv.NeedsReply)
	}
}

// TestRedTeamBlockedAuthorsAttachment: the photo a blocked person sent to
// a group they left is not served by a guessed attachment id (row ids are
// small integers) — not saved, not returned to a bridge client.
func TestRedTeamBlockedAuthorsAttachment(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	for _, id := range []string{"5", "fx-att-5"} {
		img, err := env.Service.AttachmentImage(ctx, service.AttachmentParams{AttachmentID: id})
		if !errors.Is(err, service.ErrNotFound) {
			t.Errorf("AttachmentImage(%s) = %d bytes %q, %v; want not found", id, len(img.Data), img.Filename, err)
		}
		_, err = env.Service.SaveAttachment(ctx, service.SaveParams{AttachmentID: id, Destination: filepath.Join(env.Files, "x"+id+".png"), AllowedDirs: []string{env.Files}})
		if !errors.Is(err, service.ErrNotFound) {
			t.Errorf("SaveAttachment(%s) = %v; want not found", id, err)
		}
	}
}

// capture is a DossierSummarizer that keeps what it was asked to
// summarise (what would go to the configured endpoint).
type capture struct{ got []byte }

func (c *capture) Summarize(_ context.Context, r dossier.Report) (*dossier.Summary, error) {
	c.got, _ = json.Marshal(r)
	return &dossier.Summary{Text: "ok", Model: "fake"}, nil
}

// TestRedTeamSummaryPromptClean: what a dossier hands the optional
// summary endpoint (an outside service) holds no blocked person's words
// and no secret.
func TestRedTeamSummaryPromptClean(t *testing.T) {
	c := &capture{}
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true, Summarizer: c})
	for _, ref := range []string{"Alex Hostile", servicetest.QuoteNameEmail, "Jamie Fox"} {
		c.got = nil
		if _, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: ref}); err != nil {
			t.Fatal(err)
		}
		if len(c.got) == 0 {
			t.Fatalf("%s: the summarizer was not asked", ref)
		}
		mustNotContain(t, "the summary request for "+ref, json.RawMessage(c.got),
			append(append([]string{servicetest.TwoChatSentinel, "Zanzisentinel"}, servicetest.Secrets...), "hunter2")...)
	}
}

// TestRedTeamAttachmentRenamedAfterIndexing: an attachment's name is the
// sender's to change (chat.db's transfer_name), and a rename touches only
// the attachment row — no message date moves. The next sync must read the
// message again, so answers show the current name, never the one indexed
// first (a harmless name renamed to a hostile one would otherwise stay
// hidden, and a hostile one renamed away would stay shown).
func TestRedTeamAttachmentRenamedAfterIndexing(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	ctx := context.Background()
	names := func() []string {
		pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: servicetest.HostilePhone, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range pg.Messages {
			for _, a := range m.Attachments {
				out = append(out, a.Filename)
			}
		}
		return out
	}
	if got := names(); !slices.Contains(got, "lease.pdf") {
		t.Fatalf("attachments before the rename: %q", got)
	}
	for _, tt := range []struct{ col, value, want string }{
		{"transfer_name", "lease-signed " + servicetest.NameSentinel + ".pdf", "lease-signed " + servicetest.NameSentinel + ".pdf"},
		{"transfer_name", servicetest.HostileFilename, output.Filename(servicetest.HostileFilename)},
	} {
		db, err := sql.Open("sqlite", env.ChatDB)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE attachment SET "+tt.col+" = ? WHERE ROWID = 2", tt.value); err != nil {
			t.Fatal(err)
		}
		db.Close()
		env.Sync(t)
		if got := names(); !slices.Contains(got, tt.want) {
			t.Errorf("after renaming the attachment to %q the conversation shows %q, want %q", tt.value, got, tt.want)
		}
	}
}
