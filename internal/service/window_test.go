package service_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// windowFixture is the hand-built fixture with three more messages in
// Camille's thread: 120 and 100 days old (outside a 90-day window) and 89
// days old (inside it), besides the two of the last day.
func windowFixture(t *testing.T) *servicetest.Env {
	t.Helper()
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := chatdb.ForTest(t, db)
	for i, age := range []int{120, 100, 89} {
		w.Message(chatdb.Message{ROWID: int64(2000 + i), GUID: fmt.Sprintf("fx-old-%d", age), Text: fmt.Sprintf("message from %d days ago", age),
			Handle: 5, Service: "iMessage", Date: chatdb.Nanos(servicetest.Now.Add(-time.Duration(age) * 24 * time.Hour)), Chats: []int64{5}})
	}
	return servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true})
}

// TestMessagesReadWindow: with WindowDays (what a host bridge sets), no
// message older than the window is returned, More stays true while older
// messages exist, and reading past the window is an error that says so —
// never an empty page. Without it, nothing changes.
func TestMessagesReadWindow(t *testing.T) {
	env := windowFixture(t)
	ids := func(pg service.MessagePage) string {
		var out []string
		for _, m := range pg.Messages {
			out = append(out, m.ID)
		}
		return strings.Join(out, ",")
	}
	all := "fx-old-120,fx-old-100,fx-old-89,fx-camille,fx-camille-me"
	for _, tc := range []struct {
		name     string
		window   float64
		limit    int
		before   time.Time
		pages    []string // ids of each page, newest page first
		more     []bool
		wantErr  string // error of the call after the last page ("" = none: the last page has More false)
		firstErr string // error of the first call
	}{
		{name: "no window", limit: 50, pages: []string{all}, more: []bool{false}},
		{name: "no window, pages of 2", limit: 2, pages: []string{"fx-camille,fx-camille-me", "fx-old-100,fx-old-89", "fx-old-120"}, more: []bool{true, true, false}},
		{name: "90 days", window: 90, limit: 50, pages: []string{"fx-old-89,fx-camille,fx-camille-me"}, more: []bool{true}, wantErr: "outside the read window of the last 90 days"},
		{name: "90 days, pages of 2", window: 90, limit: 2, pages: []string{"fx-camille,fx-camille-me", "fx-old-89"}, more: []bool{true, true}, wantErr: "outside the read window"},
		{name: "90 days, exactly the window's messages", window: 90, limit: 3, pages: []string{"fx-old-89,fx-camille,fx-camille-me"}, more: []bool{true}, wantErr: "outside the read window"},
		{name: "wide window holds everything", window: 3650, limit: 50, pages: []string{all}, more: []bool{false}},
		{name: "half a day: nothing inside, older exist", window: 0.5, limit: 50, firstErr: "outside the read window of the last 0.5 days"},
		{name: "before older than the window", window: 90, limit: 50, before: servicetest.Now.Add(-95 * 24 * time.Hour), firstErr: "outside the read window"},
		{name: "before inside the window", window: 90, limit: 50, before: servicetest.Now.Add(-2 * 24 * time.Hour), pages: []string{"fx-old-89"}, more: []bool{true}, wantErr: "outside the read window"},
		{name: "negative window", window: -1, limit: 50, firstErr: "read window must be a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cursor := ""
			for i := 0; ; i++ {
				pg, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille", Limit: tc.limit, WindowDays: tc.window, Before: tc.before, Cursor: cursor})
				if i == 0 && tc.firstErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.firstErr) {
						t.Fatalf("err = %v, want %q", err, tc.firstErr)
					}
					if tc.window > 0 && !errors.Is(err, service.ErrOutsideWindow) {
						t.Errorf("the window error does not wrap ErrOutsideWindow: %v", err)
					}
					return
				}
				if i == len(tc.pages) {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, service.ErrOutsideWindow) {
						t.Fatalf("past the last page: %+v, err = %v, want %q", pg, err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("page %d: %v", i, err)
				}
				if got := ids(pg); got != tc.pages[i] || pg.More != tc.more[i] || pg.Count != len(pg.Messages) {
					t.Fatalf("page %d = %s (more %v), want %s (more %v)", i, got, pg.More, tc.pages[i], tc.more[i])
				}
				if !pg.More {
					if tc.wantErr != "" || i != len(tc.pages)-1 {
						t.Fatalf("page %d ends the thread, want %d pages then %q", i, len(tc.pages), tc.wantErr)
					}
					return
				}
				if pg.NextCursor == "" {
					t.Fatalf("page %d: more without a cursor", i)
				}
				cursor = pg.NextCursor
			}
		})
	}
}
