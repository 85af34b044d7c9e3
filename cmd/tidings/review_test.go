package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// runQuery runs a query command against a servicetest data set (its home
// holds index.db and the read policy).
func runQuery(t *testing.T, env *servicetest.Env, args ...string) (string, string, error) {
	t.Helper()
	vars := map[string]string{"TIDINGS_HOME": env.Home, "TIDINGS_CONTACTS": env.VCF, "TIDINGS_IMESSAGE": env.ChatDB,
		"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339), "HOME": t.TempDir()}
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return vars[k] }}
	err := m.Run(context.Background(), args)
	return out.String(), errOut.String(), err
}

func noSentinels(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		low := strings.ToLower(s)
		for _, tok := range servicetest.Sentinels {
			if strings.Contains(low, strings.ToLower(tok)) {
				t.Errorf("%s leaked %q", what, tok)
			}
		}
	}
}

func TestReviewCommand(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	out, errOut, err := runQuery(t, env, "review", "--days", "3", "--json")
	if err != nil {
		t.Fatalf("review --json: %v\n%s", err, errOut)
	}
	var rv struct {
		Counts     map[string]int `json:"counts"`
		NeedsReply []struct {
			Label   string `json:"label"`
			Context []struct {
				Text string `json:"text"`
			} `json:"context"`
		} `json:"needs_reply"`
	}
	if err := json.Unmarshal([]byte(out), &rv); err != nil {
		t.Fatalf("review --json output: %v\n%s", err, out)
	}
	labels := map[string]bool{}
	for _, e := range rv.NeedsReply {
		labels[e.Label] = true
		for _, c := range e.Context {
			if strings.Contains(c.Text, "<untrusted_external_content>") {
				t.Errorf("CLI JSON bodies are plain, got %q", c.Text)
			}
		}
	}
	if !labels["Alex Hostile"] || !labels["Jamie Fox"] || rv.Counts["needs_reply"] != len(rv.NeedsReply) {
		t.Errorf("needs_reply = %v, counts %v", labels, rv.Counts)
	}
	human, _, err := runQuery(t, env, "review", "--days", "90", "--context", "10")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NEEDS A REPLY", "Alex Hostile", "Are you coming to the Tuesday meetup?", "SKIPPED:"} {
		if !strings.Contains(human, want) {
			t.Errorf("human review lacks %q:\n%s", want, human)
		}
	}
	if strings.ContainsAny(human, "\x1b\a\r") || strings.Contains(human, "\u202e") {
		t.Errorf("terminal control characters reached the output: %q", human)
	}
	noSentinels(t, "review", out, human)
	for _, bad := range [][]string{{"review", "--days", "0"}, {"review", "--days", "91"}, {"review", "--days", "nan"}, {"review", "--days", "1e308"}, {"review", "extra"}} {
		_, _, err := runQuery(t, env, bad...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", bad, err)
		}
	}
}

func TestDossierCommand(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	out, errOut, err := runQuery(t, env, "dossier", "Camille Durand")
	if err != nil {
		t.Fatalf("dossier: %v\n%s", err, errOut)
	}
	for _, want := range []string{"Camille Durand", "+33639981111", "messages: 1 sent, 1 received"} {
		if !strings.Contains(out, want) {
			t.Errorf("dossier output lacks %q:\n%s", want, out)
		}
	}
	js, _, err := runQuery(t, env, "dossier", "--json", "+33 6 39 98 11 11")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		ContactID string `json:"contact_id"`
		Stored    bool   `json:"stored"`
		Rebuilt   bool   `json:"rebuilt"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil || d.ContactID == "" || !d.Stored || d.Rebuilt {
		t.Errorf("dossier --json: %+v %v (the second call must reuse the stored dossier)", d, err)
	}
	// The blocked person, by every reference: an error, and no sentinel.
	for _, ref := range []string{servicetest.BlockedPhone, "Zanzisentinel", "zanzi@sentinel.example", "(415) 555-0002"} {
		out, errOut, err := runQuery(t, env, "dossier", ref)
		if err == nil {
			t.Errorf("dossier %s: no error", ref)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), ref, "<input>")
		noSentinels(t, "dossier "+ref, out, errOut, msg)
	}
	if _, _, err := runQuery(t, env, "dossier", "Jamie"); err == nil || !strings.Contains(err.Error(), "Jamie Fox") || !strings.Contains(err.Error(), "Jamie Lee") {
		t.Errorf("ambiguous name: %v", err)
	}
	var ue usageError
	if _, _, err := runQuery(t, env, "dossier"); !errors.As(err, &ue) {
		t.Errorf("dossier without a contact: %v", err)
	}
}
