//go:build unix

package bridge

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// oldMessageAges are the ages (days) of the messages windowEnv adds to
// Camille's thread: two outside the 90-day read window, one inside.
var oldMessageAges = []int{120, 100, 89}

// windowEnv is the service fixture plus three Lyon messages in Camille's
// thread, 120, 100 and 89 days old (the thread's own messages are a day
// old, one of them about Lyon too), and a question from Camille an hour
// ago.
func windowEnv(t *testing.T) *servicetest.Env {
	t.Helper()
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := chatdb.ForTest(t, db)
	for i, age := range oldMessageAges {
		w.Message(chatdb.Message{ROWID: int64(3000 + i), GUID: fmt.Sprintf("old-%d", age), Text: fmt.Sprintf("Lyon plans from %d days ago?", age),
			Handle: 5, Service: "iMessage", Date: chatdb.Nanos(servicetest.Now.Add(-time.Duration(age) * 24 * time.Hour)), Chats: []int64{5}})
	}
	// A question an hour ago, so the thread needs a reply and its review
	// entry carries context (reaching back past the window in-process).
	w.Message(chatdb.Message{ROWID: 3100, GUID: "new-ask", Text: "Tu confirmes pour samedi ?", Handle: 5, Service: "iMessage",
		Date: chatdb.Nanos(servicetest.Now.Add(-time.Hour)), Chats: []int64{5}})
	return servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true})
}

// serviceHarness is a host worker over env's query layer with every 1.3
// message action.
func serviceHarness(t *testing.T, env *servicetest.Env) *harness {
	t.Helper()
	return newHarness(t, "", func(o *Options) {
		o.Open = func(ctx context.Context, r Role) (Backend, error) {
			return &HostBackend{Data: &ServiceData{S: env.Service, Now: func() time.Time { return servicetest.Now }, Location: servicetest.Zone}}, nil
		}
		o.Extensions = ServiceExtensions(ServiceOf)
	})
}

// result decodes a 1.3 typed answer's "result".
func result[R any](t *testing.T, got map[string]any) R {
	t.Helper()
	var r R
	if got["ok"] != true {
		t.Fatalf("not ok: %v", got)
	}
	b, _ := json.Marshal(got["result"])
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExtensionsKeepTheReadWindow: the 1.3 message actions serve nothing
// older than the 90-day read window, whatever the client asks — protocol
// 1.2's cap on review, search and chat_history holds for the actions
// that carry them — while the query layer in-process (no window) does
// return those messages, so each case can fail.
func TestExtensionsKeepTheReadWindow(t *testing.T) {
	env := windowEnv(t)
	h := serviceHarness(t, env)
	floor := servicetest.Now.Add(-MaxReadDays * 24 * time.Hour)
	ctx := context.Background()
	n := 0
	call := func(action string, params any) map[string]any {
		t.Helper()
		n++
		id := fmt.Sprintf("w%d", n)
		return h.roundTrip(id, request(id, action, params, "1.3"))
	}
	searchIDs := func(r service.SearchResult) string {
		var ids []string
		for _, hit := range r.Hits {
			ids = append(ids, hit.MessageID)
		}
		return strings.Join(ids, ",")
	}

	t.Run("search_messages", func(t *testing.T) {
		in, err := env.Service.Search(ctx, service.SearchParams{Query: "Lyon", Mode: "substring", Limit: 20})
		if err != nil || searchIDs(in) != "fx-camille,old-89,old-100,old-120" {
			t.Fatalf("in-process search (no window) = %s %v", searchIDs(in), err)
		}
		for _, tc := range []struct {
			params   map[string]any
			wantDays float64
			note     bool
		}{
			{map[string]any{"Query": "Lyon", "Mode": "substring"}, 90, true},               // 0 = all in-process: the window over the bridge
			{map[string]any{"Query": "Lyon", "Mode": "substring", "Days": 3650}, 90, true}, // capped
			{map[string]any{"Query": "Lyon", "Mode": "substring", "Days": 90}, 90, false},
			{map[string]any{"query": "Lyon", "mode": "substring", "days": "89.5"}, 89.5, false},
			{map[string]any{"Query": "Lyon in 2026", "Mode": "fulltext"}, 90, true}, // a date in the query cannot widen it
		} {
			r := result[service.SearchResult](t, call(ExtSearchMessages, tc.params))
			for _, hit := range r.Hits {
				if hit.Time.Before(floor) {
					t.Errorf("%v: hit %s is %s old", tc.params, hit.MessageID, servicetest.Now.Sub(hit.Time))
				}
			}
			if tc.params["Mode"] == "substring" && !strings.HasPrefix(searchIDs(r), "fx-camille") {
				t.Errorf("%v: hits %s", tc.params, searchIDs(r))
			}
			hasNote := strings.Contains(strings.Join(r.Notes, "|"), WindowNote)
			if r.Days != tc.wantDays || hasNote != tc.note || r.MatchCount != len(r.Hits) {
				t.Errorf("%v: days %v (want %v), window note %v (want %v), match_count %d of %d", tc.params, r.Days, tc.wantDays, hasNote, tc.note, r.MatchCount, len(r.Hits))
			}
		}
		// Neighbours of a hit near the edge stay inside the window.
		in, err = env.Service.Search(ctx, service.SearchParams{Query: "89 days", Mode: "substring", Context: 3})
		if err != nil || len(in.Hits) != 1 || len(in.Hits[0].Before) < 2 {
			t.Fatalf("in-process context = %+v %v", in.Hits, err)
		}
		r := result[service.SearchResult](t, call(ExtSearchMessages, map[string]any{"Query": "89 days", "Mode": "substring", "Context": 3}))
		if len(r.Hits) != 1 || len(r.Hits[0].Before) != 0 || len(r.Hits[0].After) == 0 {
			t.Errorf("context over the bridge: %+v", r.Hits)
		}
	})

	t.Run("get_conversation_messages", func(t *testing.T) {
		in, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Camille"})
		if err != nil || in.Count != 6 {
			t.Fatalf("in-process history = %d %v", in.Count, err)
		}
		// A client that sets the window to 0 (none) is overruled.
		got := call(ExtMessages, map[string]any{"Chat": "Camille", "WindowDays": 0, "Limit": 2})
		pg := result[service.MessagePage](t, got)
		if pg.Count != 2 || !pg.More || pg.NextCursor == "" {
			t.Fatalf("page 1 = %+v", pg)
		}
		pg = result[service.MessagePage](t, call(ExtMessages, map[string]any{"Chat": "Camille", "Limit": 2, "Cursor": pg.NextCursor}))
		if pg.Count != 2 || pg.Messages[0].ID != "old-89" || !pg.More {
			t.Fatalf("page 2 = %+v", pg)
		}
		got = call(ExtMessages, map[string]any{"Chat": "Camille", "Limit": 2, "Cursor": pg.NextCursor})
		if got["ok"] != false || got["error_code"] != CodeOutsideWindow || !strings.Contains(got["error"].(string), "read window of the last 90 days") {
			t.Errorf("past the window: %v", got)
		}
		got = call(ExtMessages, map[string]any{"Chat": "Camille", "Before": servicetest.Now.Add(-100 * 24 * time.Hour).Format(time.RFC3339)})
		if got["error_code"] != CodeOutsideWindow {
			t.Errorf("before_timestamp past the window: %v", got)
		}
		got = call(ExtMessages, map[string]any{"Chat": "Camille", "WindowDays": 3650})
		if pg := result[service.MessagePage](t, got); pg.Count != 4 {
			t.Errorf("a client widened the window: %d messages", pg.Count)
		}
	})

	t.Run("list_conversations", func(t *testing.T) {
		got := result[service.ConversationList](t, call(ExtListConversations, map[string]any{"Days": 3650}))
		if got.WindowDays != 90 {
			t.Errorf("window_days = %v", got.WindowDays)
		}
	})

	t.Run("review", func(t *testing.T) {
		// In-process, a thread active in the window brings earlier
		// messages as context, here older than 90 days.
		in, err := env.Service.Review(ctx, service.ReviewParams{Days: 2, Context: 10})
		if err != nil {
			t.Fatal(err)
		}
		oldest := func(threads ...[]service.ReviewThread) (n int) {
			for _, list := range threads {
				for _, th := range list {
					for _, c := range th.Context {
						if c.Time.Before(floor) {
							n++
						}
					}
				}
			}
			return n
		}
		if oldest(in.NeedsReply, in.LowPriority) == 0 {
			t.Fatal("fixture: no in-process review context is older than the window; the test would prove nothing")
		}
		r := result[service.Review](t, call(ExtReviewMessages, map[string]any{"Days": 2, "Context": 10}))
		if n := oldest(r.NeedsReply, r.LowPriority); n != 0 {
			t.Errorf("review_messages returned %d context messages older than the window", n)
		}
		got := h.roundTrip("r12", request("r12", ActionReview, map[string]any{"days": 2}, ""))
		if len(got["needs_reply"].([]any)) == 0 {
			t.Fatalf("1.2 review has no thread needing a reply: %v", got)
		}
		for _, bucket := range []string{"needs_reply", "low_priority"} {
			for _, th := range got[bucket].([]any) {
				for _, c := range th.(map[string]any)["context"].([]any) {
					ts, err := time.ParseInLocation("2006-01-02T15:04:05", c.(map[string]any)["ts"].(string), servicetest.Zone)
					if err != nil || ts.Before(floor) {
						t.Errorf("1.2 review context %v is older than the window (%v)", c, err)
					}
				}
			}
		}
	})
}

// TestExtensionBounds: each 1.3 message action at, below and above its
// bounds (the MCP tool's): negative counts are refused, counts above the
// maximum capped, 0 is the default, and a value of the wrong form is one
// sentence with error_code invalid_params.
func TestExtensionBounds(t *testing.T) {
	env := windowEnv(t)
	h := serviceHarness(t, env)
	cases := []struct {
		action string
		params string
		want   string // error substring, "" = ok
		check  func(t *testing.T, res json.RawMessage)
	}{
		{ExtListConversations, `{"Limit":0}`, "", countAtMost(20)},
		{ExtListConversations, `{"Limit":200}`, "", nil},
		{ExtListConversations, `{"Limit":201}`, "", nil},
		{ExtListConversations, `{"Limit":9007199254740992}`, "", nil},
		{ExtListConversations, `{"Limit":9007199254740994}`, "Limit must be a finite number", nil}, // 2^53+2: 2^53+1 is 2^53 as a double
		{ExtListConversations, `{"Limit":-1}`, "Limit must not be negative", nil},
		{ExtListConversations, `{"Offset":-1}`, "Offset must not be negative", nil},
		{ExtListConversations, `{"Days":-1}`, "Days must be greater than 0", nil},
		{ExtListConversations, `{"Limit":1e308}`, "Limit must be a finite number", nil},
		{ExtListConversations, `{"Limit":"nan"}`, "Limit must be a finite number", nil},
		{ExtListConversations, `{"Limit":2.5}`, "Limit must be a whole number", nil},
		{ExtListConversations, `{"Limit":"3"}`, "", countAtMost(3)},
		{ExtListConversations, `{"limit":3.0}`, "", countAtMost(3)},
		{ExtListConversations, `{"Limit":true}`, "Limit must be a finite number", nil},
		{ExtListConversations, `{"Limit":1,"limit":2}`, "given twice", nil},
		{ExtMessages, `{"Chat":"Camille","Limit":-1}`, "Limit must not be negative", nil},
		{ExtMessages, `{"Chat":"Camille","Limit":201}`, "", nil},
		{ExtMessages, `{"chat":"Camille","before_timestamp":"2026-11-01"}`, `does not take the parameter "before_timestamp"`, nil},
		{ExtMessages, `{"Chat":"Camille","Before":"yesterday"}`, "Before must be an RFC 3339 time", nil},
		{ExtMessages, `{"Chat":7}`, "Chat must be a string", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Limit":100}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Limit":101}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Limit":0}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Limit":-1}`, "Limit must not be negative", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Context":5}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Context":6}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Context":-1}`, "Context must not be negative", nil},
		{ExtSearchMessages, `{"Query":"Lyon","Days":-1}`, "Days must be greater than 0", nil},
		{ExtSearchMessages, `{"Query":"Lyon","FromMe":"true"}`, "FromMe must be a JSON boolean", nil},
		{ExtSearchMessages, `{"query":"Lyon","from_me":false}`, "", nil},
		{ExtSearchMessages, `{"Query":"Lyon","conversation_id":"chat900100200"}`, "", func(t *testing.T, res json.RawMessage) {
			// Not ignored: the group has no Lyon message, so nothing matches.
			var r service.SearchResult
			json.Unmarshal(res, &r)
			if r.MatchCount != 0 {
				t.Errorf("conversation_id was ignored: %d hits", r.MatchCount)
			}
		}},
		{ExtSearchMessages, `{"Query":"Lyon","Conversation":"chat900100200"}`, `does not take the parameter "Conversation"`, nil},
		{ExtSearchMessages, `{"Query":"Lyon","NewFilterFromAFutureClient":null,"Other":0,"Flag":false,"List":[],"Obj":{},"Str":""}`, "", nil},
		{ExtReviewMessages, `{"Days":90}`, "", nil},
		{ExtReviewMessages, `{"Days":91}`, "days must be greater than 0 and at most 90", nil},
		{ExtReviewMessages, `{"Days":-1}`, "days must be greater than 0 and at most 90", nil},
		{ExtReviewMessages, `{"Days":0}`, "", func(t *testing.T, res json.RawMessage) {
			var r service.Review
			json.Unmarshal(res, &r)
			if r.Days != 2 {
				t.Errorf("default days = %v", r.Days)
			}
		}},
		{ExtReviewMessages, `{"Context":11}`, "", nil},
		{ExtReviewMessages, `{"Context":-1}`, "Context must not be negative", nil},
		{ExtResponseStats, `{"Chat":"Camille","Hours":8760}`, "", nil},
		{ExtResponseStats, `{"Chat":"Camille","Hours":8761}`, "hours must be greater than 0 and at most 8760", nil},
		{ExtResponseStats, `{"Chat":"Camille","Hours":-1}`, "hours must be", nil},
		{ExtLookupContacts, `{"Name":"` + strings.Repeat("a", 100) + `"}`, "", nil},
		{ExtLookupContacts, `{"Name":"` + strings.Repeat("a", 101) + `"}`, "longer than 100 characters", nil},
		{ExtServiceStatus, `{}`, "", nil},
		{ExtServiceStatus, `{"Verbose":true}`, `does not take the parameter "Verbose"`, nil},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.action, tc.params), func(t *testing.T) {
			id := fmt.Sprintf("b%d", i)
			got := h.roundTrip(id, []byte(fmt.Sprintf(`{"id":%q,"action":%q,"params":%s,"protocol_version":"1.3"}`, id, tc.action, tc.params)))
			if tc.want == "" {
				if got["ok"] != true {
					t.Fatalf("want ok: %v", got)
				}
				if tc.check != nil {
					b, _ := json.Marshal(got["result"])
					tc.check(t, b)
				}
				return
			}
			msg, _ := got["error"].(string)
			if got["ok"] != false || !strings.Contains(msg, tc.want) || got["error_code"] != CodeInvalidParams {
				t.Errorf("got %v, want invalid_params containing %q", got, tc.want)
			}
		})
	}
}

func countAtMost(n int) func(t *testing.T, res json.RawMessage) {
	return func(t *testing.T, res json.RawMessage) {
		t.Helper()
		var r struct {
			Count int `json:"count"`
		}
		json.Unmarshal(res, &r)
		if r.Count > n || r.Count == 0 {
			t.Errorf("count = %d, want 1..%d", r.Count, n)
		}
	}
}
