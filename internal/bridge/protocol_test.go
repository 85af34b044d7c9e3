//go:build unix

package bridge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

type seedExample struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

func loadExamples(t *testing.T) map[string]seedExample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "seed", "examples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ex map[string]seedExample
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	return ex
}

func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// shape describes a JSON value's structure: object keys (recursively),
// the element shape of lists, and scalar kinds.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + shape(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + shape(x[0]) + "]"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// TestSeedExamples sends every example request of protocol 1.2 (the wire
// format docs/bridge.md implements) to a worker
// whose backend returns the example's data and requires the documented
// response: the same fields with the same JSON types, and the same values.
func TestSeedExamples(t *testing.T) {
	ex := loadExamples(t)
	for _, action := range []string{ActionReview, ActionSearch, ActionChatHistory, ActionResponseStats,
		ActionContactsLookup, ActionListChats, ActionSendPreview, ActionSend} {
		t.Run(action, func(t *testing.T) {
			role := ""
			if action == ActionListChats {
				role = "manager"
			}
			h := newHarness(t, role)
			e := ex[action]
			got := h.roundTrip("abc123", e.Request)
			want := decodeAny(t, e.Response).(map[string]any)
			if action == ActionSearch {
				// Protocol 1.2's example lists one of its three matches;
				// match_count is the number of matches returned.
				want["match_count"] = float64(len(want["matches"].([]any)))
			}
			if shape(got) != shape(want) {
				t.Errorf("shape:\n got %s\nwant %s", shape(got), shape(want))
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("response:\n got %s\nwant %s", g, w)
			}
			if calls := h.fake.Calls(); !slices.Equal(calls, []string{action}) {
				t.Errorf("backend calls = %v, want [%s]", calls, action)
			}
		})
	}
	t.Run("status", func(t *testing.T) {
		for _, role := range []string{"", "manager"} {
			h := newHarness(t, role)
			got := h.roundTrip("abc123", ex["status"].Request)
			// The documented fields: helper_version, protocol_version,
			// bridge_role, allowed_actions, code_root, bridge_root,
			// python_version, policy metadata, local boolean checks.
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := []string{"action", "allowed_actions", "bridge_role", "bridge_root", "checks", "code_root",
				"helper_version", "id", "ok", "policy", "protocol_version", "python_version"}
			if !slices.Equal(keys, want) {
				t.Errorf("status keys = %v, want %v", keys, want)
			}
			if got["protocol_version"] != "1.2" || got["ok"] != true || got["action"] != "status" || got["python_version"] != nil {
				t.Errorf("status = %v", got)
			}
			wantRole := "host"
			if role != "" {
				wantRole = role
			}
			if got["bridge_role"] != wantRole || got["bridge_root"] != h.dir || got["code_root"] != "/opt/tidings" || got["helper_version"] != "test-1" {
				t.Errorf("status identity = %v", got)
			}
			checks := got["checks"].(map[string]any)
			for _, k := range []string{CheckDatabase, CheckRequestsDir, CheckResponsesDir, CheckConfirmation} {
				if _, ok := checks[k].(bool); !ok {
					t.Errorf("checks.%s missing or not a boolean: %v", k, checks)
				}
			}
			if checks[CheckRequestsDir] != true || checks[CheckResponsesDir] != true {
				t.Errorf("directory checks = %v", checks)
			}
			if h.opened() != 0 {
				t.Errorf("status opened the backend %d times; it must not read chat.db", h.opened())
			}
		}
	})
	t.Run("role_denied", func(t *testing.T) {
		h := newHarness(t, "")
		got := h.roundTrip("abc123", request("abc123", ActionListChats, map[string]any{"days": 365}, ""))
		want := decodeAny(t, ex["role_denied"].Response)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
	t.Run("send_missing_nonce", func(t *testing.T) {
		h := newHarness(t, "")
		got := h.roundTrip("abc123", request("abc123", ActionSend,
			map[string]any{"to": "+14155551234", "text": "Confirmed for 3pm.", "service": "iMessage"}, ""))
		want := decodeAny(t, ex["send_missing_nonce"].Response).(map[string]any)
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s = %v, want %v", k, got[k], v)
			}
		}
		if got["bridge_role"] != "host" || got["allowed_actions"] == nil {
			t.Errorf("error response lacks bridge_role/allowed_actions: %v", got)
		}
	})
}

// TestRoleTable checks every action on every role against protocol 1.2's
// role table (docs/bridge.md, "Roles"), and that a refused action never
// opens the backend.
func TestRoleTable(t *testing.T) {
	ex := loadExamples(t)
	hostAllowed := []string{"chat_history", "contacts_lookup", "response_stats", "review", "search", "send", "send_preview", "status"}
	managerAllowed := []string{"contacts_lookup", "list_chats", "status"}
	for _, tc := range []struct {
		role    string
		allowed []string
	}{{"", hostAllowed}, {"host", hostAllowed}, {"manager", managerAllowed}} {
		for _, action := range []string{"status", "review", "search", "chat_history", "response_stats",
			"contacts_lookup", "list_chats", "send_preview", "send"} {
			t.Run(fmt.Sprintf("%s/%s", tc.role, action), func(t *testing.T) {
				h := newHarness(t, tc.role)
				req := ex[action].Request
				got := h.roundTrip("abc123", req)
				permitted := slices.Contains(tc.allowed, action)
				if got["ok"] != permitted {
					t.Fatalf("ok = %v, want %v: %v", got["ok"], permitted, got)
				}
				if !permitted {
					if got["error"] != ErrTextNotPermitted {
						t.Errorf("error = %q", got["error"])
					}
					if h.opened() != 0 || len(h.fake.Calls()) != 0 {
						t.Errorf("a refused action opened the backend (%d) or called it (%v)", h.opened(), h.fake.Calls())
					}
					checkAllowed(t, got, tc.allowed)
				}
			})
		}
	}
	t.Run("AllowedActions", func(t *testing.T) {
		if got := AllowedActions(RoleHost, Version12, nil); !slices.Equal(got, hostAllowed) {
			t.Errorf("host = %v", got)
		}
		if got := AllowedActions(RoleManager, Version12, nil); !slices.Equal(got, managerAllowed) {
			t.Errorf("manager = %v", got)
		}
		if got := AllowedActions(RoleInvalid, Version12, nil); len(got) != 0 {
			t.Errorf("invalid = %v", got)
		}
	})
}

func checkAllowed(t *testing.T, got map[string]any, want []string) {
	t.Helper()
	raw, ok := got["allowed_actions"].([]any)
	if !ok {
		t.Fatalf("allowed_actions missing or not a list: %v", got)
	}
	var list []string
	for _, v := range raw {
		list = append(list, v.(string))
	}
	if !slices.Equal(list, want) {
		t.Errorf("allowed_actions = %v, want %v", list, want)
	}
	if !slices.IsSorted(list) {
		t.Errorf("allowed_actions not sorted: %v", list)
	}
}

// TestUnknownActionListsRoleActions: protocol 1.2 requires allowed_actions for
// the current role in every error, including an unknown action.
func TestUnknownActionListsRoleActions(t *testing.T) {
	for role, want := range map[string][]string{
		"":        {"chat_history", "contacts_lookup", "response_stats", "review", "search", "send", "send_preview", "status"},
		"manager": {"contacts_lookup", "list_chats", "status"},
	} {
		h := newHarness(t, role)
		got := h.roundTrip("u1", request("u1", "delete_everything", nil, ""))
		if got["ok"] != false || !strings.HasPrefix(got["error"].(string), "unknown action") {
			t.Errorf("role %q: %v", role, got)
		}
		checkAllowed(t, got, want)
		if _, has := got["error_code"]; has {
			t.Errorf("a 1.2 error carries error_code: %v", got)
		}
		if h.opened() != 0 {
			t.Errorf("unknown action opened the backend")
		}
	}
}

// TestInvalidRoleFailsClosed: an unknown IMESSAGE_BRIDGE_ROLE serves no
// action at all, status included, and never opens a database.
func TestInvalidRoleFailsClosed(t *testing.T) {
	for _, role := range []string{"admin", "Host", "MANAGER", " manager", "host\n", "root", "plugin", "app"} {
		t.Run(fmt.Sprintf("%q", role), func(t *testing.T) {
			h := newHarness(t, role)
			if h.w.Role() != RoleInvalid {
				t.Fatalf("role %q parsed as %q", role, h.w.Role())
			}
			for i, action := range []string{"status", "review", "list_chats", "contacts_lookup", "send", "nope"} {
				id := fmt.Sprintf("r%d", i)
				got := h.roundTrip(id, request(id, action, nil, ""))
				if got["ok"] != false || !strings.Contains(got["error"].(string), "IMESSAGE_BRIDGE_ROLE") {
					t.Errorf("%s: %v", action, got)
				}
				checkAllowed(t, got, nil)
			}
			if h.opened() != 0 {
				t.Errorf("backend opened %d times under an invalid role", h.opened())
			}
		})
	}
}
