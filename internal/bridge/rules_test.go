//go:build unix

package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInvalidRequests: every malformed request gets an error response at
// response-<file id>.json with the role's allowed actions, and never
// blocks the valid request queued after it.
func TestInvalidRequests(t *testing.T) {
	big := `{"id":"big","action":"status","params":{"pad":"` + strings.Repeat("x", MaxRequestSize) + `"}}`
	cases := []struct {
		name, body, want string
	}{
		{"not JSON", `hello`, "not JSON"},
		{"empty file", ``, "not JSON"},
		{"top-level array", `[{"id":"x","action":"status","params":{}}]`, "must be a JSON object"},
		{"top-level string", `"status"`, "must be a JSON object"},
		{"top-level null", `null`, "must be a JSON object"},
		{"truncated", `{"id":"x","action":"status","params":{`, "malformed JSON"},
		{"missing id", `{"action":"status","params":{}}`, `"id" is missing`},
		{"numeric id", `{"id":7,"action":"status","params":{}}`, `"id" must be a string`},
		{"id mismatch", `{"id":"other","action":"status","params":{}}`, "does not match the file name"},
		{"id with slash", `{"id":"../x","action":"status","params":{}}`, `"id" must be 1-128`},
		{"missing action", `{"id":"ID","params":{}}`, `"action" is missing`},
		{"numeric action", `{"id":"ID","action":1,"params":{}}`, `"action" must be a string`},
		{"null action", `{"id":"ID","action":null,"params":{}}`, `"action" must be a string`},
		{"list action", `{"id":"ID","action":["status"],"params":{}}`, `"action" must be a string`},
		{"missing params", `{"id":"ID","action":"status"}`, `"params" is missing`},
		{"null params", `{"id":"ID","action":"status","params":null}`, `"params" must be an object`},
		{"list params", `{"id":"ID","action":"status","params":[]}`, `"params" must be an object`},
		{"string params", `{"id":"ID","action":"status","params":"{}"}`, `"params" must be an object`},
		{"duplicate action", `{"id":"ID","action":"status","action":"send","params":{}}`, "duplicate key"},
		{"duplicate param", `{"id":"ID","action":"review","params":{"days":1,"days":90}}`, "duplicate key"},
		{"trailing data", `{"id":"ID","action":"status","params":{}} {}`, "data after the JSON object"},
		{"two objects", `{"id":"ID","action":"status","params":{}}{"id":"ID"}`, "data after the JSON object"},
		{"invalid UTF-8", "{\"id\":\"ID\",\"action\":\"st\xffatus\",\"params\":{}}", "not valid UTF-8"},
		{"major version 2", `{"id":"ID","action":"status","params":{},"protocol_version":"2.0"}`, "unsupported protocol_version"},
		{"numeric version", `{"id":"ID","action":"status","params":{},"protocol_version":1.3}`, `"protocol_version" must be a string`},
		{"garbage version", `{"id":"ID","action":"status","params":{},"protocol_version":"latest"}`, "is not a version"},
		{"over 64 KiB", big, "64 KiB"},
	}
	h := newHarness(t, "")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("bad%02d", i)
			body := strings.ReplaceAll(tc.body, `"ID"`, fmt.Sprintf("%q", id))
			h.put(id, []byte(body))
			okID := fmt.Sprintf("good%02d", i)
			h.put(okID, request(okID, "status", nil, ""))
			// The bad request is older, so it is processed first.
			old := time.Now().Add(-time.Minute)
			os.Chtimes(h.path(ControlDir, RequestsDir, RequestName(id)), old, old)
			h.drain()
			got := h.response(id)
			if got["ok"] != false || got["id"] != id {
				t.Fatalf("got %v", got)
			}
			if msg, _ := got["error"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("error = %q, want it to contain %q", msg, tc.want)
			}
			if msg, _ := got["error"].(string); len(msg) > 400 {
				t.Errorf("error echoes too much input (%d bytes)", len(msg))
			}
			checkAllowed(t, got, AllowedActions(RoleHost, Version12, nil))
			if next := h.response(okID); next["ok"] != true {
				t.Errorf("the valid request after it failed: %v", next)
			}
			if h.exists(ControlDir, RequestsDir, RequestName(id)) {
				t.Errorf("invalid request was not removed")
			}
		})
	}
	if h.opened() != 0 {
		t.Errorf("invalid requests opened the backend")
	}
}

// TestRequestFileRules: requests must be current-user-owned regular files
// (not symlinks, FIFOs or directories), with one link, at most 64 KiB.
func TestRequestFileRules(t *testing.T) {
	type setup func(t *testing.T, h *harness, path string)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"id":"ID","action":"status","params":{}}`), 0o600)
	cases := []struct {
		name  string
		make  setup
		want  string
		owner bool // needs root to chown
	}{
		{"symlink", func(t *testing.T, h *harness, p string) {
			must(t, os.Symlink(secret, p))
		}, "symbolic link", false},
		{"FIFO", func(t *testing.T, h *harness, p string) {
			must(t, syscall.Mkfifo(p, 0o600))
		}, "FIFO", false},
		{"directory", func(t *testing.T, h *harness, p string) {
			must(t, os.Mkdir(p, 0o700))
		}, "directory", false},
		{"hard link", func(t *testing.T, h *harness, p string) {
			must(t, os.Link(secret, p))
		}, "exactly one link", false},
		{"other owner", func(t *testing.T, h *harness, p string) {
			must(t, os.WriteFile(p, []byte(`{"id":"x","action":"status","params":{}}`), 0o600))
			must(t, os.Lchown(p, 65534, 65534))
		}, "owned by the current user", true},
		{"65 KiB", func(t *testing.T, h *harness, p string) {
			must(t, os.WriteFile(p, bytes.Repeat([]byte(" "), MaxRequestSize+1), 0o600))
		}, "64 KiB", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner && os.Geteuid() != 0 {
				t.Skip("needs root to create a file owned by another user")
			}
			h := newHarness(t, "")
			id := fmt.Sprintf("f%d", i)
			p := h.path(ControlDir, RequestsDir, RequestName(id))
			tc.make(t, h, p)
			h.put("after", request("after", "status", nil, ""))
			old := time.Now().Add(-time.Minute)
			syscall.UtimesNano(p, []syscall.Timespec{syscall.NsecToTimespec(old.UnixNano()), syscall.NsecToTimespec(old.UnixNano())})
			h.drain()
			got := h.response(id)
			if got["ok"] != false || !strings.Contains(got["error"].(string), tc.want) {
				t.Errorf("got %v, want an error containing %q", got, tc.want)
			}
			if h.response("after")["ok"] != true {
				t.Errorf("the next request was not served")
			}
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("rejected request file still present")
			}
			// A non-empty directory cannot be removed; it must not block
			// the queue on later passes either.
			if tc.name == "directory" {
				must(t, os.Mkdir(p, 0o700))
				must(t, os.WriteFile(filepath.Join(p, "x"), nil, 0o600))
				for round := range 2 {
					next := fmt.Sprintf("later%d", round)
					h.put(next, request(next, "status", nil, ""))
					h.drain()
					if h.response(next)["ok"] != true {
						t.Errorf("a stuck directory blocked the queue")
					}
				}
			}
			if data, _ := os.ReadFile(secret); !bytes.Contains(data, []byte("status")) {
				t.Errorf("the link target was modified")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRequestNameWithInvalidID: a file whose name holds no safe id cannot
// be answered (the id would become a path); it is removed, and later
// requests are served.
func TestRequestNameWithInvalidID(t *testing.T) {
	h := newHarness(t, "")
	reqs := h.path(ControlDir, RequestsDir)
	for _, n := range []string{"request-.json", "request-a b.json", "request-.hidden.json", "request-" + strings.Repeat("a", 129) + ".json"} {
		must(t, os.WriteFile(filepath.Join(reqs, n), []byte(`{}`), 0o600))
	}
	h.put("ok1", request("ok1", "status", nil, ""))
	st := h.drain()
	if st.Dropped != 4 {
		t.Errorf("dropped = %d, want 4", st.Dropped)
	}
	if h.response("ok1")["ok"] != true {
		t.Error("valid request not served")
	}
	if names := dirNames(t, reqs); len(names) != 0 {
		t.Errorf("left in requests: %v", names)
	}
	if names := dirNames(t, h.path(ControlDir, ResponsesDir)); len(names) != 0 {
		t.Errorf("responses written for unanswerable names: %v", names)
	}
}

// TestUnrelatedFilesLeftAlone: only request-*.json is a request; a
// client's temp file in flight is not touched until it is stale.
func TestUnrelatedFilesLeftAlone(t *testing.T) {
	h := newHarness(t, "")
	reqs := h.path(ControlDir, RequestsDir)
	must(t, os.WriteFile(filepath.Join(reqs, ".request-x.json.tmp"), []byte(`{"id":"x"`), 0o600))
	must(t, os.WriteFile(filepath.Join(reqs, "notes.txt"), []byte(`hi`), 0o600))
	h.drain()
	if names := dirNames(t, reqs); !slices.Equal(names, []string{".request-x.json.tmp", "notes.txt"}) {
		t.Errorf("requests folder = %v", names)
	}
}

// TestParamsAreDefaultedCappedOrRefusedAtTheSeedBounds: every action's
// parameters take protocol 1.2's defaults (docs/bridge.md), are capped where
// protocol 1.2 caps them (days, limit) and echoed capped, and are refused with
// a sentence naming the parameter when outside the bounds — at, above and below
// each bound, and for 0, negatives, 1e308, "nan" and wrong types
// (docs/bridge.md).
func TestParamsAreDefaultedCappedOrRefusedAtTheSeedBounds(t *testing.T) {
	long := strings.Repeat("é", 101)
	cases := []struct {
		role, action string
		params       string
		want         string // error substring; "" = ok
		check        func(t *testing.T, got map[string]any, f *fakeBackend)
	}{
		{"manager", "list_chats", `{}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			p := f.params[0].(ListChatsParams)
			if p.Days != 365 || p.Limit != 200 || !p.IncludeGroups || p.Query != "" {
				t.Errorf("defaults = %+v", p)
			}
			if got["window_days"] != 365.0 {
				t.Errorf("window_days = %v", got["window_days"])
			}
		}},
		{"manager", "list_chats", `{"days":3650,"limit":500,"include_groups":false,"query":"  "}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			p := f.params[0].(ListChatsParams)
			if p.Days != 3650 || p.Limit != 500 || p.IncludeGroups || p.Query != "" {
				t.Errorf("parsed %+v", p)
			}
		}},
		{"manager", "list_chats", `{"days":0.5,"limit":"7"}`, "", nil},
		{"manager", "list_chats", `{"days":0}`, "days must be a number greater than 0 and at most 3650", nil},
		{"manager", "list_chats", `{"days":-1}`, "days must be", nil},
		{"manager", "list_chats", `{"days":3651}`, "days must be", nil},
		{"manager", "list_chats", `{"days":1e308}`, "days must be", nil},
		{"manager", "list_chats", `{"days":"nan"}`, "days must be", nil},
		{"manager", "list_chats", `{"days":true}`, "days must be", nil},
		{"manager", "list_chats", `{"days":[365]}`, "days must be", nil},
		{"manager", "list_chats", `{"limit":0}`, "limit must be an integer from 1 to 500", nil},
		{"manager", "list_chats", `{"limit":501}`, "limit must be", nil},
		{"manager", "list_chats", `{"limit":2.5}`, "limit must be", nil},
		{"manager", "list_chats", `{"include_groups":"true"}`, "include_groups must be a JSON boolean", nil},
		{"manager", "list_chats", `{"include_groups":1}`, "include_groups must be a JSON boolean", nil},
		{"manager", "list_chats", `{"include_groups":null}`, "include_groups must be a JSON boolean", nil},
		{"manager", "list_chats", `{"query":7}`, "query must be a string", nil},
		{"manager", "list_chats", `{"query":"` + long + `"}`, "query must be at most 100 characters", nil},
		{"manager", "list_chats", `{"query":"` + long[:200] + `"}`, "", nil}, // exactly 100 runes
		{"", "review", `{}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if f.params[0].(ReviewParams).Days != 2 || got["days"] != 2.0 {
				t.Errorf("default days: %v / %v", f.params[0], got["days"])
			}
		}},
		{"", "review", `{"days":400}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if f.params[0].(ReviewParams).Days != 90 || got["days"] != 90.0 {
				t.Errorf("days above 90 must be capped at 90 and echoed: %v / %v", f.params[0], got["days"])
			}
		}},
		{"", "review", `{"days":"3"}`, "", nil},
		{"", "review", `{"days":0}`, "days must be", nil},
		{"", "review", `{"days":-2}`, "days must be", nil},
		{"", "review", `{"days":"Infinity"}`, "days must be", nil},
		{"", "search", `{}`, "term is required", nil},
		{"", "search", `{"term":"   "}`, "term is required", nil},
		{"", "search", `{"term":42}`, "term must be a string", nil},
		{"", "search", `{"term":"x","limit":0}`, "limit must be", nil},
		{"", "search", `{"term":"x","limit":100000}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(SearchParams); p.Limit != 500 || p.Days != 30 {
				t.Errorf("search limit must be capped at 500, default days 30: %+v", p)
			}
		}},
		{"", "search", `{"term":"x","days":91}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if got["days"] != 90.0 {
				t.Errorf("days = %v", got["days"])
			}
		}},
		// At, above and below each bound: limit 500 and days 90 are kept,
		// 501 and 90.5 capped (protocol 1.2's cap), 0 and negatives refused.
		{"", "search", `{"term":"x","limit":500,"days":90}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(SearchParams); p.Limit != 500 || p.Days != 90 {
				t.Errorf("at the bounds: %+v", p)
			}
		}},
		{"", "search", `{"term":"x","limit":501,"days":90.5}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(SearchParams); p.Limit != 500 || p.Days != 90 || got["days"] != 90.0 {
				t.Errorf("one past the bounds: %+v, echoed days %v", p, got["days"])
			}
		}},
		{"", "search", `{"term":"x","limit":1}`, "", nil},
		{"", "search", `{"term":"x","limit":-1}`, "limit must be", nil},
		{"", "search", `{"term":"x","limit":1e308}`, "limit must be", nil},
		{"", "search", `{"term":"x","limit":"100"}`, "", nil},
		{"", "search", `{"term":"x","days":0}`, "days must be", nil},
		{"", "search", `{"term":"` + strings.Repeat("x", 500) + `"}`, "", nil},
		{"", "search", `{"term":"` + strings.Repeat("x", 501) + `"}`, "term must be at most 500 characters", nil},
		{"", "chat_history", `{"chat":"Angel","limit":501,"days":1e3}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(ChatHistoryParams); p.Limit != 500 || p.Days != 90 {
				t.Errorf("chat_history caps: %+v", p)
			}
		}},
		{"", "chat_history", `{"chat":"Angel","limit":0}`, "limit must be", nil},
		{"", "chat_history", `{"chat":"` + strings.Repeat("x", 201) + `"}`, "chat must be at most 200 characters", nil},
		{"", "review", `{"days":90}`, "", nil},
		{"", "review", `{"days":2,"unknown":"ignored"}`, "", nil},
		{"", "response_stats", `{"chat":"Angel","hours":8760}`, "", nil},
		{"", "response_stats", `{"chat":"Angel","hours":-1}`, "hours must be", nil},
		{"manager", "list_chats", `{"days":3650.001}`, "days must be", nil},
		{"manager", "list_chats", `{"limit":-1}`, "limit must be", nil},
		{"", "chat_history", `{}`, "chat is required", nil},
		{"", "chat_history", `{"chat":"Angel","days":-1}`, "days must be", nil},
		{"", "chat_history", `{"chat":"Angel"}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(ChatHistoryParams); p.Days != 14 || p.Limit != 100 {
				t.Errorf("defaults %+v", p)
			}
		}},
		{"", "response_stats", `{"chat":"Angel","hours":0}`, "hours must be", nil},
		{"", "response_stats", `{"chat":"Angel","hours":100000}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if got["hours"] != float64(MaxStatsHours) {
				t.Errorf("hours = %v", got["hours"])
			}
		}},
		{"", "contacts_lookup", `{}`, "name is required", nil},
		{"", "contacts_lookup", `{"name":"` + long + `"}`, "at most 100 characters", nil},
		{"", "contacts_lookup", `{"name":"Angel"}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(ContactsLookupParams); p.Role != RoleHost {
				t.Errorf("host lookup must carry the host role (policy-filtered): %+v", p)
			}
		}},
		{"manager", "contacts_lookup", `{"name":"Angel"}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(ContactsLookupParams); p.Role != RoleManager {
				t.Errorf("role %+v", p)
			}
		}},
		{"", "send_preview", `{"to":"+14155551234","text":"hi","service":7}`, `service must be a string`, nil},
		{"", "send_preview", `{"to":"+14155551234"}`, "text is required", nil},
		{"", "send_preview", `{"text":"hi"}`, "to is required", nil},
		{"", "send_preview", `{"to":["+14155551234"],"text":"hi"}`, "to must be a string", nil},
		{"", "send_preview", `{"to":"+14155551234","text":"hi"}`, "", func(t *testing.T, got map[string]any, f *fakeBackend) {
			if p := f.params[0].(SendPreviewParams); p.Service != "" {
				t.Errorf("an omitted service reaches the gate as \"\" (the gate's default): %+v", p)
			}
		}},
		{"", "send", `{"to":"+14155551234","text":"hi","send_nonce":5}`, "send_nonce must be a string", nil},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s/%d", tc.role, tc.action, i), func(t *testing.T) {
			h := newHarness(t, tc.role)
			id := fmt.Sprintf("p%d", i)
			body := fmt.Sprintf(`{"id":%q,"action":%q,"params":%s}`, id, tc.action, tc.params)
			got := h.roundTrip(id, []byte(body))
			if tc.want == "" {
				if got["ok"] != true {
					t.Fatalf("want ok, got %v", got)
				}
				if tc.check != nil {
					tc.check(t, got, h.fake)
				}
				return
			}
			if got["ok"] != false || !strings.Contains(got["error"].(string), tc.want) {
				t.Errorf("got %v, want error containing %q", got, tc.want)
			}
			if h.opened() != 0 {
				t.Errorf("invalid params opened the backend")
			}
		})
	}
}

// TestResultNormalization: counts follow the lists, lists are never null,
// list_chats keeps at most 10 participants and limit chats.
func TestResultNormalization(t *testing.T) {
	h := newHarness(t, "manager")
	chats := make([]ChatEntry, 7)
	for i := range chats {
		chats[i] = ChatEntry{ChatID: fmt.Sprintf("chat%d", i), Kind: "group"}
	}
	parts := make([]string, 15)
	for i := range parts {
		parts[i] = fmt.Sprintf("+1415555%04d", i)
	}
	chats[0].Participants = parts
	raw, _ := json.Marshal(map[string]any{"chats": chats})
	h.fake.ex[ActionListChats] = raw
	got := h.roundTrip("n1", request("n1", ActionListChats, map[string]any{"limit": 5}, ""))
	list := got["chats"].([]any)
	if len(list) != 5 || got["chat_count"] != 5.0 || got["truncated"] != true {
		t.Errorf("limit not applied: %d chats, count %v, truncated %v", len(list), got["chat_count"], got["truncated"])
	}
	c0 := list[0].(map[string]any)
	if len(c0["participants"].([]any)) != 10 || c0["participant_count"] != 15.0 {
		t.Errorf("participants = %d, count %v", len(c0["participants"].([]any)), c0["participant_count"])
	}
	if p := list[1].(map[string]any)["participants"]; p == nil {
		t.Errorf("participants must be [] not null")
	}
	h2 := newHarness(t, "")
	h2.fake.ex[ActionSearch] = []byte(`{}`)
	got = h2.roundTrip("n2", request("n2", ActionSearch, map[string]any{"term": "x"}, ""))
	if m, ok := got["matches"].([]any); !ok || len(m) != 0 || got["match_count"] != 0.0 {
		t.Errorf("empty search = %v", got)
	}
}

// TestBackendErrors: a backend failure is an error response (never an
// empty result), and an Open failure is retried on the next request.
func TestBackendErrors(t *testing.T) {
	fail := true
	h := newHarness(t, "", func(o *Options) {
		inner := o.Open
		o.Open = func(ctx context.Context, r Role) (Backend, error) {
			if fail {
				return nil, fmt.Errorf("open chat.db: authorization denied")
			}
			return inner(ctx, r)
		}
	})
	got := h.roundTrip("e1", request("e1", ActionSearch, map[string]any{"term": "x"}, ""))
	if got["ok"] != false || !strings.Contains(got["error"].(string), "Full Disk Access") {
		t.Errorf("got %v", got)
	}
	fail = false
	if got := h.roundTrip("e2", request("e2", ActionSearch, map[string]any{"term": "x"}, "")); got["ok"] != true {
		t.Errorf("after the grant: %v", got)
	}
	h.fake.err = fmt.Errorf("chat %q: %w", "Zed", ErrNotFound)
	got = h.roundTrip("e3", request("e3", ActionChatHistory, map[string]any{"chat": "Zed"}, "1.3"))
	if got["ok"] != false || got["error_code"] != CodeNotFound || !strings.Contains(got["error"].(string), "not found") {
		t.Errorf("got %v", got)
	}
}
