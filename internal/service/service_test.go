package service_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

var ctx = context.Background()

func TestResolveEveryReference(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	camille := "iMessage;-;" + servicetest.FrenchPhone
	for _, ref := range []string{"Camille", "camille durand", "CAMILLE", "+33 6 39 98 11 11", "+33639981111", "0033639981111", "639981111",
		camille, servicetest.FrenchPhone} {
		pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: ref})
		if err != nil {
			t.Errorf("%q: %v", ref, err)
			continue
		}
		if len(pg.Conversations) != 1 || pg.Conversations[0].ID != camille || pg.Count != 2 {
			t.Errorf("%q resolved to %+v (%d messages)", ref, pg.Conversations, pg.Count)
		}
	}
	// Errors are *Error with one sentence; not-found wraps ErrNotFound.
	for _, tt := range []struct {
		ref      string
		notFound bool
		want     string
	}{
		{"Jamie", false, `"Jamie" matches 2 people: Jamie Fox (phone ending 4155550003); Jamie Lee (jamie.lee@example.com)`},
		{"+1 212 555 0100", true, "no conversation with +1 212 555 0100"},
		{"jamie.fox@example.com", true, "no conversation with jamie.fox@example.com"},
		{"Quentin", true, `no contact or conversation matches "Quentin"`},
		{"", false, "a conversation is required"},
		{strings.Repeat("x", 201), false, "longer than 200"},
		{servicetest.BlockedPhone, true, "no conversation with"},
	} {
		_, err := env.Service.Messages(ctx, service.MessagesParams{Chat: tt.ref})
		var e *service.Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tt.want) || errors.Is(err, service.ErrNotFound) != tt.notFound {
			t.Errorf("%q: err = %v, want %q (not found %v)", tt.ref, err, tt.want, tt.notFound)
		}
	}
	_, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Jamie"})
	var e *service.Error
	if errors.As(err, &e) && len(e.Candidates) != 2 {
		t.Errorf("candidates = %+v", e.Candidates)
	}
	// A number with a thread and no card, and a group by its name.
	if pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "(415) 555-0099"}); err != nil || pg.Count != 1 || pg.Contact != "" {
		t.Errorf("unknown number: %+v %v", pg, err)
	}
	if pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "climbing crew"}); err != nil || pg.Conversations[0].ChatID != servicetest.GroupChatID {
		t.Errorf("group by name: %+v %v", pg, err)
	}
}

// TestPagingIsExact pages through a thread whose messages share
// timestamps: no message is lost or repeated at a page boundary.
func TestPagingIsExact(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	same := servicetest.Now.Add(-time.Hour).Sub(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds()
	w := chatdb.ForTest(t, db)
	for i := range 7 {
		w.Message(chatdb.Message{ROWID: int64(1000 + i), GUID: "tie-" + string(rune('a'+i)), Text: "same instant", Handle: 5,
			Service: "iMessage", Date: same, Chats: []int64{5}})
	}
	db.Close()
	env := servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true})
	seen := map[string]int{}
	cursor := ""
	pages := 0
	for range 20 {
		pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille", Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range pg.Messages {
			seen[m.ID]++
		}
		if !pg.More {
			break
		}
		cursor = pg.NextCursor
	}
	if len(seen) != 9 || pages != 3 {
		t.Fatalf("saw %d messages in %d pages: %v", len(seen), pages, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", id, n)
		}
	}
	// before_timestamp is strict: nothing at or after it.
	pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille", Before: servicetest.Now.Add(-time.Hour)})
	if err != nil || pg.Count != 2 {
		t.Errorf("before the tie: %d messages, %v", pg.Count, err)
	}
	if _, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille", Cursor: "m1.bm90LWpzb24"}); err == nil {
		t.Error("a forged cursor was accepted")
	}
}

func TestGateFailsClosed(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	if _, err := env.Service.ListConversations(ctx, service.ListParams{}); err != nil {
		t.Fatal(err)
	}
	// A group-writable policy file is unsafe: nothing is read.
	p := filepath.Join(env.Home, "contacts", policy.BlockedFile)
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := env.Service.ListConversations(ctx, service.ListParams{})
	if !errors.Is(err, service.ErrPolicy) || !strings.Contains(err.Error(), "could not be loaded") {
		t.Fatalf("unsafe policy: %v", err)
	}
	if _, err := env.Service.Search(ctx, service.SearchParams{Query: "meetup"}); !errors.Is(err, service.ErrPolicy) {
		t.Errorf("search under an unsafe policy: %v", err)
	}
	time.Sleep(600 * time.Millisecond) // past the gate's snapshot age
	if env.Gate.AllowConversation(servicetestConv()) {
		t.Error("the index's gate allows a thread while the policy cannot be loaded")
	}
	os.Chmod(p, 0o600)
	if _, err := env.Service.ListConversations(ctx, service.ListParams{}); err != nil {
		t.Errorf("after the fix: %v", err)
	}
}

func TestFileBookReloads(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	lk, err := env.Service.LookupContacts(ctx, service.LookupParams{Name: "Robin"})
	if err != nil || lk.MatchCount != 0 {
		t.Fatalf("Robin before: %+v %v", lk, err)
	}
	f, err := os.OpenFile(env.VCF, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:robin\r\nFN:Robin Gym\r\nN:Gym;Robin;;;\r\nTEL:+1 415 555 0099\r\nEND:VCARD\r\n")
	f.Close()
	time.Sleep(1100 * time.Millisecond) // the book checks files at most once a second
	lk, err = env.Service.LookupContacts(ctx, service.LookupParams{Name: "Robin"})
	if err != nil || lk.MatchCount != 1 || lk.Matches[0].PhoneLast10 != "4155550099" {
		t.Fatalf("Robin after: %+v %v", lk, err)
	}
	// The new name reaches labels (pushed into the index) and senders.
	pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Robin"})
	if err != nil || pg.Messages[0].Sender != "Robin Gym" {
		t.Errorf("Robin's thread: %+v %v", pg, err)
	}
}

// TestDossierIsLiving: a stored dossier takes in new messages after a sync
// without a rebuild, and is purged when the person is blocked.
func TestDossierIsLiving(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	d, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Camille Durand"})
	if err != nil || !d.Rebuilt || d.Messages != 2 {
		t.Fatalf("first dossier: %+v %v", d.Report.Messages, err)
	}
	db, _ := sql.Open("sqlite", env.ChatDB)
	at := servicetest.Now.Add(-time.Minute).Sub(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds()
	chatdb.ForTest(t, db).Message(chatdb.Message{ROWID: 500, GUID: "fx-camille-new", Text: "Tu me dois 20 € pour le train", Handle: 5,
		Service: "iMessage", Date: at, Chats: []int64{5}})
	db.Close()
	env.Sync(t)
	n, err := env.Service.RefreshDossiers(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RefreshDossiers = %d, %v", n, err)
	}
	d, err = env.Service.Dossier(ctx, service.DossierParams{ContactID: servicetest.FrenchPhone})
	if err != nil || d.Rebuilt || d.Messages != 3 || d.UpTo.ID != "fx-camille-new" {
		t.Fatalf("after the sync: rebuilt %v, %d messages, up to %+v, %v", d.Rebuilt, d.Messages, d.UpTo, err)
	}
	if c, _ := env.Store.Count(ctx); c != 1 {
		t.Fatalf("%d dossiers stored", c)
	}
	servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone, servicetest.FrenchPhone}, nil)
	if _, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: servicetest.FrenchPhone}); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("dossier of a blocked person: %v", err)
	}
	if c, _ := env.Store.Count(ctx); c != 0 {
		t.Errorf("%d dossiers left after the block", c)
	}
}

func TestSearchSnippetsComeFromRedactedText(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	db, _ := sql.Open("sqlite", chatDB)
	long := strings.Repeat("filler words about the weekend plans ", 12) + "the card 4111 1111 1111 1111 for the deposit " + strings.Repeat("more filler text ", 10)
	at := servicetest.Now.Add(-time.Hour).Sub(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds()
	chatdb.ForTest(t, db).Message(chatdb.Message{ROWID: 600, GUID: "fx-long", Text: long, Handle: 5, Service: "iMessage", Date: at,
		Chats: []int64{5}})
	db.Close()
	env := servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true})
	for _, q := range []string{"deposit", "4111", "1111 deposit"} {
		for _, mode := range []string{"fulltext", "substring"} {
			r, err := env.Service.Search(ctx, service.SearchParams{Query: q, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Hits {
				if h.MessageID != "fx-long" {
					continue
				}
				if strings.Contains(h.Text+h.Snippet, "4111") || strings.Contains(h.Text+h.Snippet, "1111 1111") {
					t.Errorf("%s %q: card digits in %q / %q", mode, q, h.Text, h.Snippet)
				}
				if q == "deposit" && !strings.Contains(h.Snippet, "**deposit**") {
					t.Errorf("%s: snippet %q lacks the marked match", mode, h.Snippet)
				}
			}
		}
	}
}

func TestListConversationsWindowAndPaging(t *testing.T) {
	env := servicetest.Demo(t, 1200, servicetest.Options{NoEmbed: true})
	all, err := env.Service.ListConversations(ctx, service.ListParams{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if all.WindowDays != 90 || all.Total != all.Count || all.Truncated {
		t.Errorf("window %v, total %d, count %d", all.WindowDays, all.Total, all.Count)
	}
	var paged []string
	for off := 0; off < all.Total; off += 7 {
		l, err := env.Service.ListConversations(ctx, service.ListParams{Limit: 7, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.Conversations {
			paged = append(paged, c.ID)
		}
	}
	for i, c := range all.Conversations {
		if i >= len(paged) || paged[i] != c.ID {
			t.Fatalf("paging differs at %d", i)
		}
	}
	week, _ := env.Service.ListConversations(ctx, service.ListParams{Limit: 200, Days: 7})
	if week.Total >= all.Total || week.Total == 0 {
		t.Errorf("7-day window has %d of %d", week.Total, all.Total)
	}
	for _, c := range week.Conversations {
		if servicetest.Now.Sub(c.LastActivity) > 7*24*time.Hour {
			t.Errorf("%s outside the 7-day window", c.ID)
		}
	}
}

func servicetestConv() model.Conversation {
	return model.Conversation{ID: "iMessage;-;" + servicetest.FrenchPhone, Identifier: servicetest.FrenchPhone, Kind: model.KindDirect,
		Participants: []string{servicetest.FrenchPhone}}
}
