package service_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestSearchNeverShowsRunMarkedCodes: a one-time code that only Apple's
// attribute run marks (the text alone does not look like a code to the
// redactor) never appears in search_messages output, in any mode, for any
// query — including the code itself, a piece of it, or its case variants.
// Decision (docs/security.md): code ranges are not indexed at all, so a
// search for the code does not match the message; a search for its other
// words finds it with the code masked, as in history.
func TestSearchNeverShowsRunMarkedCodes(t *testing.T) {
	const (
		code = "4K9QZ7"
		text = "Blue Heron Dental: " + code + " is your check-in pass for Thursday"
		guid = "fx-otc-run"
	)
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	start := strings.Index(text, code)
	body, err := typedstream.EncodeAttributedBody(text, []typedstream.Run{
		{Start: 0, End: start, Part: 0},
		{Start: start, End: start + len(code), Part: 0, OneTimeCode: true},
		{Start: start + len(code), End: len(text), Part: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	at := servicetest.Now.Add(-3 * time.Hour).Sub(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds()
	// text NULL, body only in attributedBody (as Messages stores it on
	// recent macOS), from a person's number: nothing but the run says
	// "code".
	chatdb.ForTest(t, db).Message(chatdb.Message{ROWID: 600, GUID: guid, Body: body, Handle: 5, Service: "iMessage", Date: at,
		Read: true, PartCount: 1, Chats: []int64{5}})
	db.Close()
	env := servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{Blocked: []string{servicetest.BlockedPhone}})

	// History masks the code through the run: the reference behaviour.
	pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range pg.Messages {
		if m.ID == guid {
			found = true
			if strings.Contains(m.Text, code) || !strings.Contains(m.Text, "[REDACTED-2FA]") {
				t.Fatalf("history shows %q", m.Text)
			}
		}
	}
	if !found {
		t.Fatal("the message is not in the thread's history")
	}

	// The hits (texts, snippets, context) and notes must not hold the
	// code; the query and the coverage notes echo the caller's own words
	// ("no message contains: 4k9qz7").
	leaks := func(r service.SearchResult) bool {
		b, _ := json.Marshal([]any{r.Hits, r.Notes, r.DateFilter})
		return strings.Contains(strings.ToLower(string(b)), strings.ToLower(code))
	}
	hitIDs := func(r service.SearchResult) []string {
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.MessageID)
		}
		return ids
	}
	for _, mode := range []string{"hybrid", "fulltext", "substring", "semantic"} {
		for _, tt := range []struct {
			query string
			// Whether fulltext and substring search must find the message
			// (by its other words) or must not (the code is not
			// searchable). Hybrid and semantic may rank anything; they
			// are only checked for the code.
			fulltext, substring bool
		}{
			{code, false, false},
			{strings.ToLower(code), false, false},
			{"4K9", false, false},
			{"QZ7", false, false},
			{"Dental: " + code, true, false}, // "Dental" matches; the code does not
			{"Blue Heron Dental", true, true},
			{"check-in pass", true, true},
		} {
			t.Run(mode+"/"+tt.query, func(t *testing.T) {
				for _, context := range []int{0, 2} {
					r, err := env.Service.Search(ctx, service.SearchParams{Query: tt.query, Mode: mode, Limit: 50, Context: context})
					if err != nil {
						t.Fatal(err)
					}
					if leaks(r) {
						b, _ := json.Marshal(r)
						t.Fatalf("context %d: the code is in the output: %s", context, b)
					}
					got := false
					for _, id := range hitIDs(r) {
						got = got || id == guid
					}
					want := map[string]bool{"fulltext": tt.fulltext, "substring": tt.substring}
					if w, checked := want[mode]; checked && got != w {
						t.Errorf("context %d: found the message %v, want %v (hits %v)", context, got, w, hitIDs(r))
					}
					for _, h := range r.Hits {
						if h.MessageID == guid && !strings.Contains(h.Text, "[REDACTED-2FA]") {
							t.Errorf("hit text %q: the code is not masked", h.Text)
						}
					}
				}
			})
		}
	}
}
