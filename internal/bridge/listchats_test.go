//go:build unix

package bridge

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var fixtureNow = testclock.Date(2026, 8, 15, 12, 0, 0, 0, time.UTC)

// fixtureChat is one chat of the list_chats fixture.
type fixtureChat struct {
	guid, ident, display, service string
	style                         int // 0 = NULL
	members                       []string
	ages                          []time.Duration // one message per age before fixtureNow
	seconds                       bool            // store dates in seconds (old unit)
	noJoinDate                    bool            // message_date 0: fall back to message.date
}

func sentinel(chat, i int) string { return fmt.Sprintf("SENTINEL-BODY-%d-%d", chat, i) }

// buildChatDB creates a Messages database from a real schema dump and
// fills it. Every message has a sentinel text and a sentinel
// attributedBody, so a test can prove no body reaches an answer.
func buildChatDB(t *testing.T, schema string, chats []fixtureChat) string {
	t.Helper()
	ddl, err := schemaDDL(schema)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chat.db")
	db, err := sql.Open("sqlite", path+"?_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("BEGIN"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := db.Exec("COMMIT"); err != nil {
			t.Fatal(err)
		}
	}()
	w := chatdb.ForTest(t, db)
	handles := map[string]int64{}
	msg := 0
	for ci, c := range chats {
		// The chat, then its members: each address gets one handle.
		chatID := w.Chat(chatdb.Chat{GUID: c.guid, Style: c.style, Identifier: c.ident, Service: c.service, DisplayName: &c.display})
		for _, h := range c.members {
			hid, ok := handles[h]
			if !ok {
				hid = w.Handle(chatdb.Handle{ID: h, Service: "iMessage"})
				handles[h] = hid
			}
			w.Member(chatID, hid)
		}
		for i, age := range c.ages {
			msg++
			at := fixtureNow.Add(-age)
			date := chatdb.Nanos(at)
			if c.seconds {
				date = chatdb.Seconds(at)
			}
			mid := w.Message(chatdb.Message{GUID: fmt.Sprintf("m%d", msg), Date: date, Text: sentinel(ci, i),
				Body: []byte("streamtyped\x81" + sentinel(ci, i) + "-ATTR")})
			jd := date
			if c.noJoinDate {
				jd = 0
			}
			w.Join(chatID, mid, jd)
		}
	}
	return path
}

const day = 24 * time.Hour

// fixtureChats mirrors protocol 1.2's example plus the edge cases.
func fixtureChats() []fixtureChat {
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("+1415555%04d", 100+i)
	}
	return []fixtureChat{
		{guid: "iMessage;+;chat100200300", ident: "chat100200300", display: "Family", service: "iMessage", style: 43,
			members: []string{"+14155551234", "+14155559876", "bob@example.com"}, ages: []time.Duration{day + time.Hour, 2 * day, 3 * day}},
		{guid: "iMessage;-;+14155551234", ident: "+14155551234", service: "iMessage", style: 45,
			members: []string{"+14155551234"}, ages: []time.Duration{2*day + time.Hour, 9 * day}},
		{guid: "SMS;-;+14155550000", ident: "+14155550000", service: "SMS", style: 45,
			members: []string{"+14155550000"}, ages: []time.Duration{400 * day}}, // outside 365 days
		{guid: "iMessage;+;chat999", ident: "chat999", service: "iMessage",
			members: []string{"+14155551234", "carol@example.com"}, ages: []time.Duration{5 * day}}, // no style: heuristic
		{guid: "iMessage;+;chat777", ident: "chat777", service: "iMessage", style: 43,
			members: many, ages: []time.Duration{6 * day}, seconds: true}, // 12 members, dates in seconds
		{guid: "iMessage;-;dave@example.com", ident: "dave@example.com", service: "iMessage", style: 45,
			members: []string{"dave@example.com"}, ages: []time.Duration{7 * day}, noJoinDate: true},
		{guid: "iMessage;-;+14155552222", ident: "+14155552222", service: "iMessage", style: 45,
			members: []string{"+14155552222"}}, // no messages at all
	}
}

type names map[string]string

func (n names) DisplayName(h string) string { return n[h] }

var fixtureNames = names{"+14155551234": "Alice Example", "bob@example.com": "Bob"}

func TestListChats(t *testing.T) {
	path := buildChatDB(t, "macos15.sql", fixtureChats())
	c, err := OpenChatDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list := func(p ListChatsParams) ListChatsResult {
		t.Helper()
		if p.Limit == 0 {
			p.Limit = 200
		}
		r, err := c.ListChats(context.Background(), p, fixtureNow, fixtureNames, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ids := func(r ListChatsResult) []string {
		var out []string
		for _, c := range r.Chats {
			out = append(out, c.ChatID)
		}
		return out
	}
	all := list(ListChatsParams{Days: 365, IncludeGroups: true})
	want := []string{"chat100200300", "+14155551234", "chat999", "chat777", "dave@example.com"}
	if got := ids(all); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v (newest activity first, 400-day-old and silent chats excluded)", got, want)
	}
	family := all.Chats[0]
	wantFamily := ChatEntry{ChatID: "chat100200300", Kind: "group", DisplayName: "Family", Label: "Family",
		Participants: []string{"+14155551234", "+14155559876", "bob@example.com"}, ParticipantCount: 3,
		Service: "iMessage", MessageCount: 3, LastActivityDate: testclock.Text(time.DateOnly, "2026-08-14")}
	if !equalJSON(family, wantFamily) {
		t.Errorf("family = %+v\nwant %+v", family, wantFamily)
	}
	alice := all.Chats[1]
	if alice.Kind != "direct" || alice.Label != "Alice Example" || alice.DisplayName != "" || alice.MessageCount != 2 || alice.LastActivityDate != testclock.Text(time.DateOnly, "2026-08-13") {
		t.Errorf("direct = %+v", alice)
	}
	if g := all.Chats[2]; g.Kind != "group" || g.Label != "Alice Example, carol@example.com" {
		t.Errorf("style NULL chat999 = %+v (want group by the chat… heuristic, participant label)", g)
	}
	if g := all.Chats[3]; len(g.Participants) != 10 || g.ParticipantCount != 12 || g.LastActivityDate != testclock.Text(time.DateOnly, "2026-08-09") || !strings.HasSuffix(g.Label, "+9") {
		t.Errorf("big group = %+v", g)
	}
	if d := all.Chats[4]; d.MessageCount != 1 || d.LastActivityDate != testclock.Text(time.DateOnly, "2026-08-08") || d.Label != "dave@example.com" {
		t.Errorf("fallback to message.date = %+v", d)
	}
	if r := list(ListChatsParams{Days: 3650, IncludeGroups: true}); len(r.Chats) != 6 {
		t.Errorf("3650 days: %v", ids(r))
	}
	if r := list(ListChatsParams{Days: 2.5, IncludeGroups: true}); !slices.Equal(ids(r), []string{"chat100200300", "+14155551234"}) || r.Chats[0].MessageCount != 2 {
		t.Errorf("2.5 days: %v %+v", ids(r), r.Chats)
	}
	if r := list(ListChatsParams{Days: 365, IncludeGroups: false}); !slices.Equal(ids(r), []string{"+14155551234", "dave@example.com"}) {
		t.Errorf("no groups: %v", ids(r))
	}
	if r := list(ListChatsParams{Days: 365, IncludeGroups: true, Limit: 2}); !r.Truncated || r.ChatCount != 2 {
		t.Errorf("limit 2: %+v", r)
	}
	if r := list(ListChatsParams{Days: 365, IncludeGroups: true, Limit: 5}); r.Truncated {
		t.Errorf("exactly 5 matches is not truncated")
	}
	for q, want := range map[string][]string{
		"family":      {"chat100200300"},           // display name / label
		"ALICE":       {"+14155551234", "chat999"}, // label, case-insensitive
		"bob@example": {"chat100200300"},           // participant handle
		"5559876":     {"chat100200300"},           // participant handle substring
		"chat7":       {"chat777"},                 // chat_id
		"carol":       {"chat999"},                 // unnamed group label / handle
		"nobody":      nil,
	} {
		if r := list(ListChatsParams{Days: 365, IncludeGroups: true, Query: strings.ToLower(q)}); !slices.Equal(ids(r), want) {
			t.Errorf("query %q = %v, want %v", q, ids(r), want)
		}
	}
	body, _ := json.Marshal(list(ListChatsParams{Days: 3650, IncludeGroups: true}))
	if strings.Contains(string(body), "SENTINEL") {
		t.Fatalf("a message body reached list_chats: %s", body)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestListChatsNeverSelectsBodies: the listing runs unchanged on a
// database whose message table has no body columns at all (so no query
// can name them), and on the real schema with sentinel bodies none reaches
// the worker's response.
func TestListChatsNeverSelectsBodies(t *testing.T) {
	for _, schema := range []string{"nobodies.sql", "macos15.sql", "iOS6.1.6.sql"} {
		t.Run(schema, func(t *testing.T) {
			path := buildChatDB(t, schema, fixtureChats())
			h := newHarness(t, "manager", func(o *Options) {
				o.Open = func(ctx context.Context, r Role) (Backend, error) {
					db, err := OpenChatDB(ctx, path)
					if err != nil {
						return nil, err
					}
					return &ManagerBackend{Chats: db, Names: fixtureNames, Now: func() time.Time { return fixtureNow }, Location: time.UTC}, nil
				}
			})
			h.put("lc", request("lc", ActionListChats, map[string]any{"days": 3650}, ""))
			h.drain()
			data, err := os.ReadFile(h.path(ControlDir, ResponsesDir, ResponseName("lc")))
			if err != nil {
				t.Fatal(err)
			}
			var got ListChatsResult
			json.Unmarshal(data, &got)
			if !strings.Contains(string(data), `"ok":true`) || got.ChatCount != 6 {
				t.Fatalf("response %s", data)
			}
			if strings.Contains(string(data), "SENTINEL") {
				t.Fatalf("a body reached the response: %s", data)
			}
			if schema == "iOS6.1.6.sql" && got.Chats[0].DisplayName != "" {
				t.Errorf("display_name on a schema without it: %+v", got.Chats[0])
			}
		})
	}
	for _, q := range []string{qChats, qMembers, activitySQL, (&ChatDB{cmjDate: true}).dateExpr(), (&ChatDB{}).dateExpr()} {
		for _, col := range []string{"text", "attributedBody", "subject", "message_summary_info", "payload_data"} {
			if regexp.MustCompile(`(?i)\b` + col + `\b`).MatchString(q) {
				t.Errorf("query names %s: %s", col, q)
			}
		}
	}
}

// schemaDDL returns the executable DDL of a fixture schema: a real Messages
// dump from internal/imessage/schemas ("macos15.sql", "iOS6.1.6.sql"), or
// the hand-written testdata/nobodies.sql, whose message table has no body
// columns at all, so any query touching text or attributedBody fails.
func schemaDDL(name string) (string, error) {
	if name == "nobodies.sql" {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		return string(b), err
	}
	return schemas.DDL(strings.TrimSuffix(name, ".sql"))
}
