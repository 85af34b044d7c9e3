package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// The red-team tests send the bridge what a hostile process that can
// write to the request folder would: every 1.2 and 1.3 action aimed at a
// blocked person (other handles, spellings, conversation ids, the group
// they left, their photo by a guessed id), requests whose keys repeat in
// another letter case, and a manager role asked for bodies. Every response
// file is scanned for the fixture's tokens.

// rtEcho removes the caller's own input (and its words) from a response,
// so only what the helper added is scanned.
func rtEcho(s string, params any) string {
	var echo []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, c := range x {
				walk(c)
			}
		case string:
			if x != "" {
				echo = append(echo, x)
				echo = append(echo, strings.FieldsFunc(x, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })...)
			}
		}
	}
	walk(params)
	slices.SortFunc(echo, func(a, b string) int { return len(b) - len(a) })
	for _, e := range echo {
		if len(e) >= 3 {
			s = regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(e)+`\b`).ReplaceAllString(s, "<input>")
		}
	}
	return s
}

// rtScan fails when a response carries a token outside the echo of the
// request's params.
func rtScan(t *testing.T, what string, params any, got map[string]any, tokens []string) {
	t.Helper()
	b, _ := json.Marshal(got)
	low := strings.ToLower(rtEcho(string(b), params))
	for _, tok := range tokens {
		if strings.Contains(low, strings.ToLower(tok)) {
			i := strings.Index(low, strings.ToLower(tok))
			t.Errorf("%s leaked %q: …%s…", what, tok, low[max(0, i-200):min(len(low), i+80)])
		}
	}
}

// bridgeBlockedRefs name the blocked person or their threads.
var bridgeBlockedRefs = []string{
	servicetest.BlockedPhone, "(415) 555-0002", "zanzi@sentinel.example", "ZANZI@sentinel.example", "iMessage;-;zanzi@sentinel.example",
	"\uff0b\uff11 415\u2011555\u20110002", "Zanzisentinel", servicetest.BlockedGroup, "iMessage;+;" + servicetest.BlockedGroup,
}

func TestRedTeamBridgeActions(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	h := serviceHarness(t, env)
	tokens := append(slices.Clone(servicetest.Sentinels), servicetest.RedTeamSentinels...)
	type rq struct {
		action  string
		params  map[string]any
		version string
		hidden  bool
	}
	calls := []rq{
		{action: ActionStatus},
		{action: ActionStatus, version: "1.3"},
		{action: ExtServiceStatus, version: "1.3"},
		{action: ActionReview, params: map[string]any{"days": 90}},
		{action: ActionReview, params: map[string]any{"days": 90}, version: "1.3"},
		{action: ActionContactsLookup, params: map[string]any{"name": "Zanzi"}},
		{action: ActionContactsLookup, params: map[string]any{"name": "sentinel"}},
		{action: ActionContactsLookup, params: map[string]any{"name": "a"}},
		{action: ActionChatHistory, params: map[string]any{"chat": "Book club", "days": 90, "limit": 500}},
		{action: ActionChatHistory, params: map[string]any{"chat": servicetest.FormerGroupID, "days": 90, "limit": 500}},
		{action: ActionChatHistory, params: map[string]any{"chat": "Alex Hostile", "days": 90, "limit": 500}},
		{action: ActionResponseStats, params: map[string]any{"chat": "Book club", "hours": 8760}},
		{action: ExtListConversations, params: map[string]any{"Limit": 200}, version: "1.3"},
		{action: ExtListConversations, params: map[string]any{"Limit": 200, "Query": "sentinel"}, version: "1.3"},
		{action: ExtReviewMessages, params: map[string]any{"Days": 90, "Context": 10}, version: "1.3"},
		{action: ExtMessages, params: map[string]any{"Chat": "Book club", "Limit": 200}, version: "1.3"},
		{action: ExtMessages, params: map[string]any{"Chat": "Alex Hostile", "Limit": 200}, version: "1.3"},
		{action: ExtDossier, params: map[string]any{"ContactID": "Alex Hostile"}, version: "1.3"},
		// A client asking for the unfiltered lookup is overridden on a host.
		{action: ExtLookupContacts, params: map[string]any{"Name": "Zanzi", "Unfiltered": true}, version: "1.3"},
		{action: ExtLookupContacts, params: map[string]any{"Name": "sentinel", "unfiltered": true}, version: "1.3"},
	}
	for _, id := range []string{"4", "fx-att-4", "5", "fx-att-5"} {
		calls = append(calls, rq{action: ExtAttachmentImage, params: map[string]any{"AttachmentID": id}, version: "1.3", hidden: true},
			rq{action: ExtViewAttachment, params: map[string]any{"AttachmentID": id, "Size": "preview"}, version: "1.3", hidden: true})
	}
	for _, ref := range bridgeBlockedRefs {
		calls = append(calls,
			rq{action: ActionChatHistory, params: map[string]any{"chat": ref, "days": 90}, hidden: true},
			rq{action: ActionResponseStats, params: map[string]any{"chat": ref, "hours": 8760}, hidden: true},
			rq{action: ExtMessages, params: map[string]any{"Chat": ref}, version: "1.3", hidden: true},
			rq{action: ExtMessages, params: map[string]any{"ConversationID": ref}, version: "1.3", hidden: true},
			rq{action: ExtResponseStats, params: map[string]any{"Chat": ref, "Hours": 8760}, version: "1.3", hidden: true},
			rq{action: ExtDossier, params: map[string]any{"ContactID": ref}, version: "1.3", hidden: true},
			rq{action: ExtSearchMessages, params: map[string]any{"Query": "tomorrow", "Contact": ref}, version: "1.3", hidden: true},
		)
	}
	for _, tok := range tokens {
		calls = append(calls, rq{action: ActionSearch, params: map[string]any{"term": tok, "days": 90, "limit": 500}})
		for _, mode := range []string{"hybrid", "fulltext", "substring"} {
			calls = append(calls, rq{action: ExtSearchMessages, params: map[string]any{"Query": tok, "Mode": mode, "Limit": 100, "Context": 5}, version: "1.3"})
		}
	}
	for i, c := range calls {
		if c.params == nil {
			c.params = map[string]any{}
		}
		id := fmt.Sprintf("rt%d", i)
		got := h.roundTrip(id, request(id, c.action, c.params, c.version))
		what := fmt.Sprintf("%s %s %v", c.version, c.action, c.params)
		rtScan(t, what, c.params, got, tokens)
		if c.hidden {
			if msg, _ := got["error"].(string); got["ok"] != false || !strings.Contains(msg, "in the messages Tidings can read") {
				t.Errorf("%s = %v, want an error saying it is not in the messages Tidings can read", what, got)
			}
		} else if got["ok"] != true {
			t.Errorf("%s failed: %v", what, got["error"])
		}
	}
}

// TestRedTeamBridgeKeyCase: a request whose keys repeat in another letter
// case cannot make the worker act on a value other checks did not see:
// whatever wins, the read policy applies to the value acted on.
func TestRedTeamBridgeKeyCase(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	h := serviceHarness(t, env)
	tokens := append(slices.Clone(servicetest.Sentinels), servicetest.RedTeamSentinels...)
	for i, body := range []string{
		`{"id":"%s","action":"status","ACTION":"chat_history","params":{"chat":"zanzi@sentinel.example","days":90}}`,
		`{"id":"%s","action":"chat_history","params":{"chat":"Alex Hostile","CHAT":"zanzi@sentinel.example","days":90}}`,
		`{"id":"%s","action":"chat_history","params":{"chat":"Alex Hostile","Chat":"iMessage;+;chat900100999","days":90}}`,
		`{"id":"%s","action":"search","params":{"term":"hello","Term":"QZXSENTINELBODY","days":90}}`,
		`{"id":"%s","protocol_version":"1.3","action":"get_conversation_messages","params":{"Chat":"Alex Hostile","chat":"zanzi@sentinel.example"}}`,
		`{"id":"%s","protocol_version":"1.3","action":"get_attachment_image","params":{"AttachmentID":"1","attachmentid":"5"}}`,
		`{"id":"%s","protocol_version":"1.3","action":"lookup_contacts","params":{"Name":"Zanzi","UNFILTERED":true}}`,
		`{"id":"%s","action":"chat_\u0068istory","params":{"chat":"zanzi@sentinel\u002eexample","days":90}}`,
	} {
		id := fmt.Sprintf("kc%d", i)
		b := fmt.Sprintf(body, id)
		got := h.roundTrip(id, []byte(b))
		var params any
		json.Unmarshal([]byte(b), &params)
		rtScan(t, b, params, got, tokens)
	}
}

// TestRedTeamBridgeManagerGetsNoBodies: a manager bridge refuses every
// body-returning action, 1.2 and 1.3, before opening anything, and its
// list_chats never carries a body.
func TestRedTeamBridgeManagerGetsNoBodies(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	h := serviceHarness(t, env)
	h.opts.Role = string(RoleManager)
	h.w = h.worker()
	for i, c := range []struct {
		action, version string
		params          map[string]any
	}{
		{ActionReview, "", map[string]any{"days": 90}},
		{ActionSearch, "", map[string]any{"term": "QZXSENTINELBODY"}},
		{ActionChatHistory, "", map[string]any{"chat": "Alex Hostile"}},
		{ActionSendPreview, "", map[string]any{"to": "+14155550001", "text": "hi"}},
		{ExtMessages, "1.3", map[string]any{"Chat": "Alex Hostile"}},
		{ExtSearchMessages, "1.3", map[string]any{"Query": "hello"}},
		{ExtReviewMessages, "1.3", nil},
		{ExtDossier, "1.3", map[string]any{"ContactID": "Alex Hostile"}},
		{ExtAttachmentImage, "1.3", map[string]any{"AttachmentID": "1"}},
		{ExtViewAttachment, "1.3", map[string]any{"AttachmentID": "1"}},
		{ExtListConversations, "1.3", nil},
	} {
		if c.params == nil {
			c.params = map[string]any{}
		}
		id := fmt.Sprintf("m%d", i)
		got := h.roundTrip(id, request(id, c.action, c.params, c.version))
		if got["ok"] != false || got["bridge_role"] != string(RoleManager) {
			t.Errorf("manager %s %s = %v, want refused", c.version, c.action, got)
		}
		rtScan(t, c.action, c.params, got, append(slices.Clone(servicetest.Hostile[:1]), "Which book is next", "hello from Alex"))
	}
}

// TestRedTeamBridgeHostileJSON: requests built to break the parser or the
// checks behind it — nesting as deep as 64 KiB allows, numbers beyond any
// float, a byte-order mark, lone surrogates, NUL, prototype keys — each
// get an answer (never a crash or a hang), leak nothing, and do not block
// the request queued after them.
func TestRedTeamBridgeHostileJSON(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	h := serviceHarness(t, env)
	tokens := append(slices.Clone(servicetest.Sentinels), servicetest.RedTeamSentinels...)
	deep := strings.Repeat("[", 30000) + strings.Repeat("]", 30000)
	deepObj := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	for i, body := range []string{
		`{"id":"%s","action":"review","params":{"days":1e999}}`,
		`{"id":"%s","action":"review","params":{"days":-0}}`,
		`{"id":"%s","action":"search","params":{"term":"x","days":90,"limit":18446744073709551617}}`,
		`{"id":"%s","action":"search","params":{"term":"x","pad":` + deep + `}}`,
		`{"id":"%s","action":"search","params":{"term":"x","pad":` + deepObj + `}}`,
		"\ufeff" + `{"id":"%s","action":"status","params":{}}`,
		`{"id":"%s","action":"chat_history","params":{"chat":"\ud800zanzi@sentinel.example\udfff","days":90}}`,
		`{"id":"%s","action":"chat_history","params":{"chat":"zanzi@sentinel.example\u0000","days":90}}`,
		`{"id":"%s","action":"chat_history","params":{"chat":"Alex Hostile\u0000zanzi@sentinel.example","days":90}}`,
		`{"id":"%s","action":"contacts_lookup","params":{"name":"Zanzi","__proto__":{"unfiltered":true},"constructor":{"prototype":{"unfiltered":true}}}}`,
		`{"id":"%s","protocol_version":"1.3","action":"lookup_contacts","params":{"Name":"Zanzi","Unfiltered":"true"}}`,
		`{"id":"%s","protocol_version":"2.0","action":"review","params":{"days":90}}`,
		`{"id":"%s","protocol_version":"1.99999999999999999999","action":"get_conversation_messages","params":{"Chat":"zanzi@sentinel.example"}}`,
		`{"id":"%s","action":"review","params":{"days":90}} {"id":"x","action":"send","params":{}}`,
	} {
		id := fmt.Sprintf("hj%d", i)
		b := fmt.Sprintf(body, id)
		if len(b) > MaxRequestSize {
			t.Fatalf("case %d is %d bytes, over the request limit", i, len(b))
		}
		h.put(id, []byte(b))
		h.put(id+"-after", request(id+"-after", ActionStatus, map[string]any{}, ""))
		h.drain()
		got := h.response(id)
		if after := h.response(id + "-after"); after["ok"] != true {
			t.Errorf("case %d blocked the next request: %v", i, after)
		}
		var params any
		json.Unmarshal([]byte(strings.TrimPrefix(b, "\ufeff")), &params)
		rtScan(t, fmt.Sprintf("case %d", i), params, got, tokens)
	}
}

// TestRedTeamBridgePlantedResponse: a process that can write to the
// bridge folder plants response-<id>.json (and its temp name) as a
// symlink to a file elsewhere before the helper answers. The helper's
// answer — message bodies — must replace the link, never be written
// through it, and the file elsewhere must stay as it was.
func TestRedTeamBridgePlantedResponse(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	h := serviceHarness(t, env)
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := h.path(ControlDir, ResponsesDir)
	for i, name := range []string{ResponseName("pl0"), "." + ResponseName("pl1") + ".tmp"} {
		id := fmt.Sprintf("pl%d", i)
		if err := os.Symlink(outside, filepath.Join(resp, name)); err != nil {
			t.Fatal(err)
		}
		h.put(id, request(id, ActionChatHistory, map[string]any{"chat": "Alex Hostile", "days": 90}, ""))
		h.drain()
		if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
			t.Fatalf("%s: the helper wrote through a planted symlink: %q %v", name, b, err)
		}
		if fi, err := os.Lstat(filepath.Join(resp, ResponseName(id))); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: response mode %v", id, fi.Mode().Perm())
			}
		}
	}
}

// TestRedTeamBridgeHostileNames: names a third party controls (group
// title and rename, attachment name, custom tapback, contact name and
// organisation, labels, senders, reasons) leave every 1.2 and 1.3 action —
// and a manager's list_chats and contacts_lookup, which read chat.db and
// the contacts directly — redacted, sanitized and escaped like wrapped
// content: no literal wrapper tag, no card number, no control character.
// An escaped name copied back still resolves.
func TestRedTeamBridgeHostileNames(t *testing.T) {
	env := servicetest.HostileNames(t, servicetest.Options{NoEmbed: true})
	type rq struct {
		action, version string
		params          map[string]any
	}
	check := func(h *harness, calls []rq) map[string]bool {
		seen := map[string]bool{}
		for i, c := range calls {
			id := fmt.Sprintf("hn%d", i)
			got := h.roundTrip(id, request(id, c.action, c.params, c.version))
			what := fmt.Sprintf("%s %s %v", c.version, c.action, c.params)
			if got["ok"] != true {
				t.Errorf("%s failed: %v", what, got["error"])
			}
			for k := range servicetest.CheckNames(t, what, any(got)) {
				seen[k] = true
			}
			b, _ := json.Marshal(got)
			servicetest.CheckNameText(t, what, string(b))
		}
		return seen
	}
	seen := check(serviceHarness(t, env), []rq{
		{ActionReview, "", map[string]any{"days": 2}},
		{ActionChatHistory, "", map[string]any{"chat": servicetest.HostileGroupID, "days": 90, "limit": 500}},
		{ActionChatHistory, "", map[string]any{"chat": servicetest.HostileNameEmail, "days": 90}},
		{ActionSearch, "", map[string]any{"term": "report", "days": 90}},
		{ActionContactsLookup, "", map[string]any{"name": "Hostile"}},
		{ExtListConversations, "1.3", map[string]any{"Limit": 200}},
		{ExtReviewMessages, "1.3", map[string]any{"Days": 2, "Context": 3}},
		{ExtMessages, "1.3", map[string]any{"ConversationID": servicetest.HostileGroupID, "Limit": 200}},
		{ExtSearchMessages, "1.3", map[string]any{"Query": "Friday", "Mode": "substring", "Context": 3}},
		{ExtDossier, "1.3", map[string]any{"ContactID": servicetest.HostileNameEmail}},
		{ExtLookupContacts, "1.3", map[string]any{"Name": "Hostile"}},
		// An escaped name copied back resolves.
		{ActionChatHistory, "", map[string]any{"chat": "Rock &amp; Roll &lt;club&gt;", "days": 90}},
		{ExtLookupContacts, "1.3", map[string]any{"Name": "Ann &amp; Bo"}},
	})
	for _, k := range []string{"label", "display_name", "title", "filename", "emoji", "contact_name", "name", "organization", "reasons"} {
		if !seen[k] {
			t.Errorf("no bridge answer carried the hostile name in %q", k)
		}
	}
	mgr := newHarness(t, "manager", func(o *Options) {
		o.Open = func(ctx context.Context, r Role) (Backend, error) {
			db, err := OpenChatDB(ctx, env.ChatDB)
			if err != nil {
				return nil, err
			}
			cards, err := contacts.ReadVCardFile(env.VCF)
			if err != nil {
				return nil, err
			}
			book, err := contacts.NewBook(cards, "US")
			if err != nil {
				return nil, err
			}
			return &ManagerBackend{Chats: db, Contacts: book, Now: func() time.Time { return servicetest.Now }, Location: time.UTC}, nil
		}
	})
	seen = check(mgr, []rq{
		{ActionListChats, "", map[string]any{"days": 90, "include_groups": true}},
		{ActionListChats, "", map[string]any{"days": 90, "include_groups": true, "query": "Rock &amp; Roll"}},
		{ActionContactsLookup, "", map[string]any{"name": "Hostile"}},
		{ActionContactsLookup, "", map[string]any{"name": "Ann &amp; Bo"}},
	})
	for _, k := range []string{"label", "display_name", "name"} {
		if !seen[k] {
			t.Errorf("no manager answer carried the hostile name in %q", k)
		}
	}
	for i, c := range []rq{
		{ActionListChats, "", map[string]any{"days": 90, "include_groups": true, "query": "Rock &amp; Roll"}},
		{ActionContactsLookup, "", map[string]any{"name": "Ann &amp; Bo"}},
	} {
		id := fmt.Sprintf("esc%d", i)
		got := mgr.roundTrip(id, request(id, c.action, c.params, c.version))
		b, _ := json.Marshal(got)
		if !strings.Contains(string(b), `Rock \u0026amp; Roll \u0026lt;club\u0026gt;`) && !strings.Contains(string(b), `Ann \u0026amp; Bo Smith`) {
			t.Errorf("manager %s %v (an escaped name copied back) found nothing: %s", c.action, c.params, b)
		}
	}
}
