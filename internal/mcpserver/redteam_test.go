package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// The red-team tests attack the message tools over a real MCP session on
// servicetest.RedTeam: the hand-built fixture plus the ways a blocked
// person's words could still reach an answer (a second handle on their
// card, a group they left, a message row joined to two chats, their
// number written with Unicode digits, their reaction in an allowed group),
// secrets in subjects and in triage reasons, a code only Apple marks, and
// hostile bodies. Each attack is a row of a table; every answer — text
// and structured content, success or error — is scanned for every token.

// rtCall is one attack.
type rtCall struct {
	tool string
	args map[string]any
	// hidden: the call names something the read policy hides, so the
	// answer must be an isError sentence saying it is not there (never an
	// empty success, never a hint that it exists).
	hidden bool
}

// blockedRefs are ways to name the blocked person or their threads that
// the base sentinel test does not try: the second handle in other
// spellings, the Unicode-formatted number, their conversation ids.
var blockedRefs = []string{
	"zanzi@sentinel.example", "ZANZI@Sentinel.Example", "mailto:zanzi@sentinel.example", "iMessage;-;zanzi@sentinel.example",
	"\uff0b\uff11 415\u2011555\u20110002", "SMS;-;\uff0b\uff11 415\u2011555\u20110002", "+1\u00a0415\u00a0555\u00a00002",
	"\uff14\uff11\uff15\uff15\uff15\uff15\uff10\uff10\uff10\uff12", "1-415-555-0002", "tel:+14155550002",
}

// redTeamCalls are the attacks of TestRedTeamReadPolicy.
func redTeamCalls(files string) []rtCall {
	out := []rtCall{
		{tool: "get_status"},
		{tool: "list_conversations", args: map[string]any{"limit": 200}},
		{tool: "list_conversations", args: map[string]any{"limit": 200, "query": "sentinel"}},
		{tool: "list_conversations", args: map[string]any{"limit": 200, "query": "zanzi"}},
		{tool: "list_conversations", args: map[string]any{"limit": 200, "query": "555\u2011"}},
		{tool: "list_conversations", args: map[string]any{"limit": 200, "query": "Book"}},
		{tool: "review_messages", args: map[string]any{"days": 90, "context": 10}},
		{tool: "review_messages", args: map[string]any{"days": 2}},
		{tool: "lookup_contacts", args: map[string]any{"name": "Zanzi"}},
		{tool: "lookup_contacts", args: map[string]any{"name": "sentinel"}},
		{tool: "lookup_contacts", args: map[string]any{"name": "Bo"}},
		// Allowed threads the blocked person wrote in or reacted in.
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Book club", "limit": 200}},
		{tool: "get_conversation_messages", args: map[string]any{"conversation_id": servicetest.FormerGroupID, "limit": 200}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Alex Hostile", "limit": 200}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": servicetest.NoCardPhone, "limit": 200}},
		{tool: "get_response_stats", args: map[string]any{"chat": "Book club", "hours": 8760}},
		{tool: "get_response_stats", args: map[string]any{"chat": "Alex Hostile", "hours": 8760}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": "Alex Hostile"}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": servicetest.NoCardPhone}},
		{tool: "search_messages", args: map[string]any{"query": "book club", "context": 5, "limit": 100}},
		{tool: "search_messages", args: map[string]any{"query": "which book", "conversation_id": servicetest.FormerGroupID, "context": 5}},
		{tool: "search_messages", args: map[string]any{"query": "chats", "contact": "Alex Hostile", "context": 5, "mode": "substring"}},
		{tool: "search_messages", args: map[string]any{"query": "wrote", "mode": "substring", "context": 5}},
		{tool: "search_messages", args: map[string]any{"query": "e-mail address", "from_me": false, "context": 5}},
		// The photo the blocked person sent to the group they left, by its
		// guessable row id and by guid.
		{tool: "save_attachment", args: map[string]any{"attachment_id": "5", "destination": filepath.Join(files, "former.png")}, hidden: true},
		{tool: "save_attachment", args: map[string]any{"attachment_id": "fx-att-5", "destination": filepath.Join(files, "former.png")}, hidden: true},
		// The same photo shown to the model instead of saved: refused the
		// same way (TestBlockedPhotoIsRefusedByGetAttachmentAsBySaveAttachment
		// compares the sentences).
		{tool: "get_attachment", args: map[string]any{"attachment_id": "5"}, hidden: true},
		{tool: "get_attachment", args: map[string]any{"attachment_id": "fx-att-5", "size": "full"}, hidden: true},
	}
	// Query syntax aimed at the engines behind search: FTS5 operators and
	// column filters, LIKE wildcards, regular-expression and glob
	// characters, quotes, NUL, very long words. Each may fail with a
	// sentence, never with a blocked message or a crash.
	for _, q := range []string{`*`, `%`, `_`, `%SENTINEL%`, `"`, `""`, `'`, `\`, `.*`, `[a-z]*`, `NEAR(quokkablockedword QZXSENTINELBODY)`,
		`text:QZXSENTINELBODY`, `conv:*`, `{text}: quokka*`, `QZXSENTINELBODY OR *`, `- NOT quokka`, `^quokka`, "quokka\x00blockedword",
		`ZANZI*`, `sentinel*`, `e-mail`, strings.Repeat("zanzi", 100)} {
		for _, mode := range []string{"hybrid", "fulltext", "substring"} {
			out = append(out, rtCall{tool: "search_messages", args: map[string]any{"query": q, "mode": mode, "limit": 100, "context": 5}})
		}
	}
	for _, ref := range blockedRefs {
		out = append(out,
			rtCall{tool: "get_conversation_messages", args: map[string]any{"chat": ref}, hidden: true},
			rtCall{tool: "get_conversation_messages", args: map[string]any{"conversation_id": ref}, hidden: true},
			rtCall{tool: "get_response_stats", args: map[string]any{"chat": ref, "hours": 8760}, hidden: true},
			rtCall{tool: "get_contact_dossier", args: map[string]any{"contact_id": ref}, hidden: true},
			rtCall{tool: "search_messages", args: map[string]any{"query": "address", "contact": ref}, hidden: true},
			rtCall{tool: "search_messages", args: map[string]any{"query": "number", "conversation_id": ref}, hidden: true},
		)
	}
	for _, q := range servicetest.RedTeamSentinels {
		typo := strings.ToLower(q[:len(q)-2]) + "l" // reaches the vocabulary through typo tolerance
		for _, mode := range []string{"hybrid", "fulltext", "substring", "semantic"} {
			out = append(out,
				rtCall{tool: "search_messages", args: map[string]any{"query": q, "mode": mode, "limit": 100, "context": 5}},
				rtCall{tool: "search_messages", args: map[string]any{"query": typo, "mode": mode, "limit": 100}},
			)
		}
	}
	return out
}

// redTeamTokens are the tokens no answer may carry: the base fixture's
// sentinels and the red team's.
func redTeamTokens() []string {
	return append(slices.Clone(servicetest.Sentinels), servicetest.RedTeamSentinels...)
}

// answerTexts returns what a result says — the error text, or the
// structured content and the text content with the echo of the caller's
// own input removed.
func answerTexts(t *testing.T, tool string, args map[string]any, r result) []string {
	t.Helper()
	var texts []string
	if r.isError {
		texts = append(texts, r.text)
	} else {
		for _, raw := range [][]byte{r.raw, []byte(r.text)} {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s: result is not JSON: %v", tool, err)
			}
			for _, k := range echoKeys {
				delete(v, k)
			}
			b, _ := json.Marshal(v)
			texts = append(texts, string(b))
		}
	}
	// The input, and each of its words (notes name the query words no
	// message contains), longest first.
	var echo []string
	for _, v := range args {
		if s, ok := v.(string); ok && s != "" {
			echo = append(echo, s)
			echo = append(echo, strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })...)
		}
	}
	slices.SortFunc(echo, func(a, b string) int { return len(b) - len(a) })
	for i := range texts {
		for _, e := range echo {
			if len(e) >= 3 {
				texts[i] = regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(e)+`\b`).ReplaceAllString(texts[i], "<input>")
			}
		}
	}
	return texts
}

// scanTokens fails when an answer carries one of tokens (case-insensitive,
// JSON escapes decoded) anywhere but in the echo of the caller's input.
func scanTokens(t *testing.T, tool string, args map[string]any, r result, tokens []string) {
	t.Helper()
	for _, s := range answerTexts(t, tool, args, r) {
		low := strings.ToLower(s)
		for _, tok := range tokens {
			if strings.Contains(low, strings.ToLower(tok)) {
				t.Errorf("%s(%v) leaked %q: %s", tool, args, tok, clipAround(s, tok))
			}
		}
	}
}

// clipAround shows the part of s around tok.
func clipAround(s, tok string) string {
	i := strings.Index(strings.ToLower(s), strings.ToLower(tok))
	if i < 0 {
		return clipTest(s)
	}
	return s[max(0, i-200):min(len(s), i+len(tok)+100)]
}

// notThere is what every "hidden" answer says: a hidden thread reads
// exactly like an absent one.
const notThere = "in the messages Tidings can read"

// TestRedTeamReadPolicy runs every attack against a data set where the
// person is blocked before the first sync, and against one where they are
// blocked after everything was indexed (purge).
func TestRedTeamReadPolicy(t *testing.T) {
	for _, tt := range []struct {
		name       string
		blockFirst bool
	}{{"blocked before indexing", true}, {"blocked after indexing", false}} {
		t.Run(tt.name, func(t *testing.T) {
			opts := servicetest.Options{}
			if !tt.blockFirst {
				opts.Blocked = []string{}
			}
			env := servicetest.RedTeam(t, opts)
			cs, _ := toolSession(t, env, Filters{})
			if !tt.blockFirst {
				// Before the block every red-team thread is readable (so the
				// test can fail), and dossiers of those people are stored.
				for _, tok := range servicetest.RedTeamSentinels {
					r := callTool(t, cs, "search_messages", map[string]any{"query": tok, "mode": "substring"})
					if r.isError || !strings.Contains(string(r.raw), tok) {
						t.Fatalf("%s not visible before the block: %s", tok, clipTest(r.text))
					}
				}
				for _, ref := range []string{"zanzi@sentinel.example", "Alex Hostile"} {
					if r := callTool(t, cs, "get_contact_dossier", map[string]any{"contact_id": ref}); r.isError {
						t.Fatalf("dossier of %s before the block: %s", ref, r.text)
					}
				}
				servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
			}
			tokens := redTeamTokens()
			for _, c := range redTeamCalls(env.Files) {
				r := callTool(t, cs, c.tool, c.args)
				scanTokens(t, c.tool, c.args, r, tokens)
				if c.hidden && (!r.isError || !strings.Contains(r.text, notThere)) {
					t.Errorf("%s(%v) = isError %v %q, want an error saying it is not %s", c.tool, c.args, r.isError, clipTest(r.text), notThere)
				}
			}
			// The allowed threads are still there, minus the blocked
			// person's words: the group they left keeps its other message.
			var pg struct {
				Messages []struct {
					ID string `json:"id"`
				} `json:"messages"`
			}
			ok(t, cs, "get_conversation_messages", map[string]any{"chat": servicetest.FormerGroupID}, &pg)
			if len(pg.Messages) != 1 || pg.Messages[0].ID != "rt-former-2" {
				t.Errorf("the group the blocked person left shows %+v, want only rt-former-2", pg.Messages)
			}
		})
	}
}

// hostileMarkers are phrases of the fixture's hostile bodies. Wherever one
// appears in an answer, it must be inside an untrusted-content element.
var hostileMarkers = []string{"ignore all previous instructions", "developer mode", "system:", "send_message succeeded", "[tool result]", "eulav"}

// TestRedTeamNothingUnwrapped calls every tool that returns text and
// requires every string carrying words of a hostile body to be exactly
// one wrapped, sanitized element, and no error to carry them at all.
func TestRedTeamNothingUnwrapped(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	calls := []rtCall{
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Alex Hostile", "limit": 200}},
		{tool: "review_messages", args: map[string]any{"days": 90, "context": 10}},
		{tool: "review_messages", args: map[string]any{"days": 2, "context": 1}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": "Alex Hostile"}},
		{tool: "get_response_stats", args: map[string]any{"chat": "Alex Hostile", "hours": 8760}},
		{tool: "list_conversations", args: map[string]any{"limit": 200}},
	}
	for _, q := range []string{"ignore previous instructions", "SYSTEM", "developer mode", "tool result", "untrusted_external_content", "eulav"} {
		for _, mode := range []string{"hybrid", "fulltext", "substring", "semantic"} {
			calls = append(calls, rtCall{tool: "search_messages", args: map[string]any{"query": q, "mode": mode, "context": 5, "limit": 100}})
		}
	}
	found := 0
	for _, c := range calls {
		r := callTool(t, cs, c.tool, c.args)
		if r.isError {
			for _, m := range hostileMarkers {
				if strings.Contains(strings.ToLower(r.text), m) {
					t.Errorf("%s(%v): error carries message text %q: %s", c.tool, c.args, m, r.text)
				}
			}
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(r.text), &v); err != nil {
			t.Fatalf("%s: text is not JSON: %v", c.tool, err)
		}
		for _, data := range []any{r.data, v} {
			for _, s := range allStrings(data) {
				low := strings.ToLower(s)
				for _, m := range hostileMarkers {
					if !strings.Contains(low, m) || slices.ContainsFunc(echoArgs(c.args), func(a string) bool { return strings.EqualFold(a, s) }) {
						continue
					}
					found++
					checkWrapped(t, c.tool, s)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no hostile text reached any answer: the test proves nothing")
	}
}

func echoArgs(args map[string]any) []string {
	var out []string
	for _, v := range args {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestRedTeamSecretsNeverLeave looks for the fixture's secrets in every
// answer: bodies, subjects, search texts and snippets, triage reasons
// (where a contact name with a quotation mark once opened a hole in the
// removal of quoted message text), dossiers.
func TestRedTeamSecretsNeverLeave(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	calls := []rtCall{
		{tool: "review_messages", args: map[string]any{"days": 90, "context": 10}},
		{tool: "review_messages", args: map[string]any{"days": 1, "context": 1}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": servicetest.QuoteNameEmail}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Alex Hostile", "limit": 200}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Jamie Fox"}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": servicetest.QuoteNameEmail}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": "Alex Hostile"}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": "Jamie Fox"}},
		{tool: "search_messages", args: map[string]any{"query": "card", "context": 5, "limit": 100}},
		{tool: "search_messages", args: map[string]any{"query": "subject", "context": 5}},
		{tool: "search_messages", args: map[string]any{"query": "code", "context": 5, "mode": "substring", "limit": 100}},
	}
	for _, c := range calls {
		r := callTool(t, cs, c.tool, c.args)
		if r.isError {
			t.Errorf("%s(%v): %s", c.tool, c.args, r.text)
			continue
		}
		scanTokens(t, c.tool, c.args, r, servicetest.Secrets)
	}
	// The reasons still explain the triage, with the quote elided.
	var rv struct {
		NeedsReply []struct {
			ChatID  string   `json:"chat_id"`
			Reasons []string `json:"reasons"`
		} `json:"needs_reply"`
	}
	ok(t, cs, "review_messages", map[string]any{"days": 1}, &rv)
	i := slices.IndexFunc(rv.NeedsReply, func(e struct {
		ChatID  string   `json:"chat_id"`
		Reasons []string `json:"reasons"`
	}) bool {
		return e.ChatID == servicetest.QuoteNameEmail
	})
	if i < 0 || len(rv.NeedsReply[i].Reasons) == 0 || !strings.Contains(strings.Join(rv.NeedsReply[i].Reasons, " "), "“…”") {
		t.Errorf("the question from %s is not in needs_reply with an elided quote: %+v", servicetest.QuoteNameEmail, rv.NeedsReply)
	}
}

// TestRedTeamOneTimeCodeRun: a code that only Apple's one-time-code run
// marks (no keyword, no shape the redactor's rules know) is masked in
// every answer that carries its message.
func TestRedTeamOneTimeCodeRun(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	for _, c := range []rtCall{
		{tool: "get_conversation_messages", args: map[string]any{"chat": "32665"}},
		{tool: "review_messages", args: map[string]any{"days": 1, "context": 10}},
		{tool: "search_messages", args: map[string]any{"query": "Acme", "mode": "fulltext", "context": 5}},
		{tool: "search_messages", args: map[string]any{"query": "Acme", "mode": "substring", "context": 5}},
		{tool: "search_messages", args: map[string]any{"query": "code", "context": 5}},
	} {
		r := callTool(t, cs, c.tool, c.args)
		if r.isError {
			t.Errorf("%s(%v): %s", c.tool, c.args, r.text)
			continue
		}
		scanTokens(t, c.tool, c.args, r, []string{servicetest.OTPMarkedCode})
	}
}

// TestRedTeamSearchIsNoOracle: search must not confirm a secret that
// redaction hides. Asking for the real code and for a wrong one gives the
// same answer in every mode; otherwise a model could read a masked code
// digit by digit ("code is 4", "code is 48", …).
func TestRedTeamSearchIsNoOracle(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	type hitKey struct {
		ID    string
		Score float64
	}
	// What an answer says besides its echo: hits with scores, match count,
	// coverage (candidate counts), notes.
	hits := func(args map[string]any) []hitKey {
		var sr struct {
			Hits []struct {
				MessageID string  `json:"message_id"`
				Score     float64 `json:"score"`
			} `json:"hits"`
			MatchCount int             `json:"match_count"`
			Coverage   json.RawMessage `json:"coverage"`
		}
		ok(t, cs, "search_messages", args, &sr)
		out := []hitKey{{ID: "coverage " + noteWithoutEcho(string(sr.Coverage), args["query"].(string)), Score: float64(sr.MatchCount)}}
		for _, h := range sr.Hits {
			out = append(out, hitKey{h.MessageID, h.Score})
		}
		return out
	}
	for _, tt := range []struct{ secret, wrong string }{
		{"482913", "482914"},
		{"code is 4829", "code is 4828"},
		{"code is 48", "code is 47"},
		{"771204", "771205"},
		{"4111 1111 1111 1111", "4111 1111 1111 1112"},
		{"4111 1111", "4112 1111"},
		{servicetest.QuoteCard, "4111111111111112"},
		{servicetest.SubjectCard, "5555 5555 5555 4445"},
	} {
		for _, mode := range []string{"substring", "fulltext", "hybrid"} {
			got := hits(map[string]any{"query": tt.secret, "mode": mode, "limit": 100})
			want := hits(map[string]any{"query": tt.wrong, "mode": mode, "limit": 100})
			if !slices.Equal(got, want) {
				t.Errorf("%s search for %q answers %v, for %q %v: the search confirms the masked secret", mode, tt.secret, got, tt.wrong, want)
			}
		}
	}
}

// noteWords is the list of words a coverage note says no message
// contains.
var noteWords = regexp.MustCompile(`no message contains:? ([^":;]*)`)

// noteWithoutEcho replaces, in a coverage JSON, the words a note says no
// message contains by what they are in query: "<every query word>" when
// they are all of its distinct words, otherwise their positions in it.
// The words are an echo of the query; which of them are listed is not.
func noteWithoutEcho(cov, query string) string {
	q := strings.Fields(strings.ToLower(query))
	return noteWords.ReplaceAllStringFunc(cov, func(m string) string {
		listed := strings.Split(noteWords.FindStringSubmatch(m)[1], ", ")
		distinct := map[string]bool{}
		for _, w := range q {
			distinct[w] = true
		}
		all := len(listed) == len(distinct)
		pos := make([]string, len(listed))
		for i, w := range listed {
			j := slices.Index(q, strings.ToLower(w))
			all = all && j >= 0
			pos[i] = fmt.Sprintf("w%d", j)
		}
		if all {
			return "no message contains: <every query word>"
		}
		return "no message contains: " + strings.Join(pos, ", ")
	})
}

// TestRedTeamOwnMessageJoinedToBlockedThread: one of the owner's messages
// that chat.db joins to the blocked thread and to an allowed one is part
// of the blocked thread and must not be shown through the other.
func TestRedTeamOwnMessageJoinedToBlockedThread(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	for _, c := range []rtCall{
		{tool: "get_conversation_messages", args: map[string]any{"chat": servicetest.NoCardPhone, "limit": 200}},
		{tool: "search_messages", args: map[string]any{"query": "wrote", "mode": "substring", "context": 5}},
		{tool: "review_messages", args: map[string]any{"days": 90, "context": 10}},
	} {
		scanTokens(t, c.tool, c.args, callTool(t, cs, c.tool, c.args), []string{servicetest.TwoChatMineSentinel})
	}
}

// TestRedTeamSaveAttachmentPaths: save_attachment writes only where the
// profile allows, whatever the destination looks like, and never through
// a link to somewhere else.
func TestRedTeamSaveAttachmentPaths(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.png")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(env.Files, outside) // "../../004": a path through ".."
	if err != nil {
		t.Fatal(err)
	}
	// A hard link inside the allowed folder to a file outside it.
	hard := filepath.Join(env.Files, "hard.png")
	if err := os.Link(victim, hard); err != nil {
		t.Fatal(err)
	}
	// A folder inside the allowed one that is a symlink to outside, and a
	// dangling symlink as the destination.
	if err := os.Symlink(outside, filepath.Join(env.Files, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "created.png"), filepath.Join(env.Files, "dangling.png")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, dest  string
		overwrite bool
		want      string
	}{
		{"1", env.Files + "/" + rel + "/x.png", false, "outside the folders"},
		{"1", filepath.Join(env.Files, "out", "x.png"), false, "outside the folders"},
		{"1", filepath.Join(env.Files, "dangling.png"), true, "symbolic link"},
		{"1", filepath.Join(env.Files, "dangling.png"), false, ""},
		{"1", env.Files, true, ""},
		{"1", env.Files + "/", true, ""},
		{"1", "/proc/self/fd/1", true, "outside the folders"},
		{"1", "/dev/null", true, "outside the folders"},
		{"1", filepath.Join(env.Files, "nul\x00.png"), false, ""},
		{"1", "~/x.png", false, "absolute"},
		{"1", "file://" + filepath.Join(env.Files, "x.png"), false, "absolute"},
		{"1", filepath.Join(env.Files, strings.Repeat("a", 300)+".png"), false, ""},
		{"../../etc/passwd", filepath.Join(env.Files, "p.png"), false, "not found"},
		{"1 OR 1=1", filepath.Join(env.Files, "q.png"), false, "not found"},
		{"%", filepath.Join(env.Files, "q.png"), false, "not found"},
		{"-1", filepath.Join(env.Files, "q.png"), false, "not found"},
		{"4", filepath.Join(env.Files, "q.png"), false, notThere},
		{"fx-att-4", filepath.Join(env.Files, "q.png"), false, notThere},
		{"5", filepath.Join(env.Files, "q.png"), false, notThere},
	} {
		args := map[string]any{"attachment_id": tt.id, "destination": tt.dest, "overwrite": tt.overwrite}
		r := callTool(t, cs, "save_attachment", args)
		if !r.isError {
			t.Errorf("save_attachment(%v) succeeded: %s", args, clipTest(r.text))
			continue
		}
		if tt.want != "" && !strings.Contains(r.text, tt.want) {
			t.Errorf("save_attachment(%v) = %q, want it to say %q", args, r.text, tt.want)
		}
		scanTokens(t, "save_attachment", args, r, append(redTeamTokens(), env.Dir))
	}
	// With overwrite, the hard link is replaced, never written through.
	r := callTool(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": hard, "overwrite": true})
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Fatalf("the file outside the allowed folder was written through a hard link (%v): %q, tool said %s", err, b, r.text)
	}
	for _, p := range []string{filepath.Join(outside, "x.png"), filepath.Join(outside, "created.png")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created outside the allowed folder", p)
		}
	}
}

// TestRedTeamHostileNames: strings a third party controls — a group title
// and its rename event, an attachment's name, a custom tapback's text, a
// contact's name and organisation, and the labels, senders and triage
// reasons built from them — leave every tool redacted, sanitized and
// escaped like wrapped content (output.Name), in structured and text
// content, successes and errors: no literal wrapper tag, no card number,
// no control character or line break. Every field must be reached, and a
// name copied back in its escaped form still resolves.
func TestRedTeamHostileNames(t *testing.T) {
	env := servicetest.HostileNames(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	calls := []rtCall{
		{tool: "list_conversations", args: map[string]any{"limit": 200}},
		{tool: "list_conversations", args: map[string]any{"limit": 200, "query": "namesentinel"}},
		{tool: "review_messages", args: map[string]any{"days": 2, "context": 3}},
		{tool: "get_conversation_messages", args: map[string]any{"conversation_id": servicetest.HostileGroupID, "limit": 200}},
		{tool: "get_conversation_messages", args: map[string]any{"chat": servicetest.HostileNameEmail}},
		{tool: "search_messages", args: map[string]any{"query": "report", "context": 3}},
		{tool: "search_messages", args: map[string]any{"query": "Friday", "mode": "substring", "context": 3}},
		{tool: "lookup_contacts", args: map[string]any{"name": "Hostile"}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": servicetest.HostileNameEmail}},
		{tool: "get_response_stats", args: map[string]any{"chat": servicetest.HostileNameEmail, "hours": 8760}},
		// Errors that name the contact or the group.
		{tool: "get_conversation_messages", args: map[string]any{"chat": "namesentinel"}},
		{tool: "save_attachment", args: map[string]any{"attachment_id": strconv.Itoa(servicetest.HostileAttachment), "destination": filepath.Join(env.Files, "h.png")}},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		r := callTool(t, cs, c.tool, c.args)
		where := fmt.Sprintf("%s(%v)", c.tool, c.args)
		if r.isError {
			servicetest.CheckNameText(t, where+" error", r.text)
			continue
		}
		var text any
		if err := json.Unmarshal([]byte(r.text), &text); err != nil {
			t.Fatalf("%s: text is not JSON: %v", where, err)
		}
		for _, v := range []any{r.data, text} {
			for k := range servicetest.CheckNames(t, where, v) {
				seen[k] = true
			}
		}
		servicetest.CheckNameText(t, where+" serialized", string(r.raw))
		// The text content is JSON on one line that also holds real
		// wrapper tags (it is not HTML-escaped): the name must not close
		// or open an element there, nor carry a control character.
		checkWrapperBalance(t, where+" text content", r.text)
		if strings.ContainsAny(r.text, "\x07\x1b\u202e") {
			t.Errorf("%s: text content carries a control character", where)
		}
	}
	for _, k := range []string{"label", "display_name", "title", "filename", "emoji", "sender", "by", "name", "organization", "contact_name", "reasons", "contact"} {
		if !seen[k] {
			t.Errorf("no answer carried the hostile name in %q: the test does not reach that field", k)
		}
	}
	// Copied back in the escaped form an answer showed, a name resolves:
	// as chat, as list_conversations' query and as lookup_contacts' name.
	var l struct {
		Conversations []struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		} `json:"conversations"`
	}
	ok(t, cs, "list_conversations", map[string]any{"limit": 200, "query": "rock"}, &l)
	if len(l.Conversations) != 1 || l.Conversations[0].Label != "Rock &amp; Roll &lt;club&gt;" {
		t.Fatalf("list_conversations(rock) = %+v, want the escaped group name", l.Conversations)
	}
	escaped := l.Conversations[0].Label
	var pg struct {
		Conversations []struct {
			ID string `json:"id"`
		} `json:"conversations"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": escaped}, &pg)
	if len(pg.Conversations) != 1 || pg.Conversations[0].ID != l.Conversations[0].ID {
		t.Errorf("chat %q resolved to %+v, want %s", escaped, pg.Conversations, l.Conversations[0].ID)
	}
	ok(t, cs, "list_conversations", map[string]any{"query": escaped}, &l)
	if len(l.Conversations) != 1 {
		t.Errorf("list_conversations query %q found %+v", escaped, l.Conversations)
	}
	var lc struct {
		Matches []struct {
			Name string `json:"name"`
		} `json:"matches"`
	}
	ok(t, cs, "lookup_contacts", map[string]any{"name": "Ann &amp; Bo"}, &lc)
	if len(lc.Matches) != 1 || lc.Matches[0].Name != "Ann &amp; Bo Smith" {
		t.Errorf("lookup_contacts(Ann &amp; Bo) = %+v, want Ann &amp; Bo Smith", lc.Matches)
	}
}

// TestTextContentKeepsTheWrapperClosed: a tool result's text content is
// JSON written without HTML escaping, so the model reads the tags the
// untrusted-content notice describes (`<untrusted_external_content>`, not
// `\u003c…`) and `&amp;` once, not `\u0026amp;`. What keeps third-party
// text inside its element is the wrapper's own escaping of `&<>`
// (docs/security.md, "Untrusted-content wrapping"), not the JSON encoder's:
// read as raw text, every closing tag in the block follows its own opening
// tag, although the fixture's bodies spell the closing tag in every form.
func TestTextContentKeepsTheWrapperClosed(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	for _, c := range []rtCall{
		{tool: "get_conversation_messages", args: map[string]any{"chat": "Alex Hostile", "limit": 200}},
		{tool: "search_messages", args: map[string]any{"query": "untrusted_external_content", "mode": "substring", "limit": 100}},
		{tool: "get_contact_dossier", args: map[string]any{"contact_id": "Alex Hostile"}},
		{tool: "list_conversations", args: map[string]any{"limit": 200}},
	} {
		r := callTool(t, cs, c.tool, c.args)
		if r.isError {
			t.Fatalf("%s: %s", c.tool, r.text)
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(r.text, esc) {
				t.Errorf("%s: text content is HTML-escaped (%s): %s", c.tool, esc, clipText(r.text))
			}
		}
		opened := checkWrapperBalance(t, c.tool, r.text)
		if c.tool != "list_conversations" && opened == 0 {
			t.Errorf("%s: no wrapped content: the test proves nothing", c.tool)
		}
		var v any
		if err := json.Unmarshal([]byte(r.text), &v); err != nil {
			t.Errorf("%s: text content is not JSON: %v", c.tool, err)
		}
	}
}

// checkWrapperBalance reads text as raw text and fails unless every
// closing wrapper tag follows its own opening tag with no raw `<` between
// them; it returns the number of elements.
func checkWrapperBalance(t *testing.T, where, text string) (opened int) {
	t.Helper()
	const open, close = "<untrusted_external_content>", "</untrusted_external_content>"
	rest := text
	for {
		i, j := strings.Index(rest, open), strings.Index(rest, close)
		if j < 0 {
			if i >= 0 {
				t.Errorf("%s: an element is never closed", where)
			}
			return opened
		}
		if i < 0 || j < i {
			t.Errorf("%s: a closing tag without its opening tag: …%s", where, clipText(rest[max(0, j-200):j+len(close)]))
			return opened
		}
		if strings.Contains(rest[i+len(open):j], "<") {
			t.Errorf("%s: a raw < inside an element: %s", where, clipText(rest[i:j]))
		}
		opened++
		rest = rest[j+len(close):]
	}
}

func clipText(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
