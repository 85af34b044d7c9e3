package mcpserver

import (
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestRedTeamReferencesThatAreNotNames: through real MCP tool calls, a
// chat, contact or contact_id value that is not a name, handle or id
// (query syntax, wildcards, punctuation alone) selects nobody. Each
// answer is the isError sentence of an unknown name and names neither the
// person whose first name starts with "Or" nor their number, and
// lookup_contacts finds nobody (docs/security.md, "Red-team tests").
func TestRedTeamReferencesThatAreNotNames(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	servicetest.AddCard(t, vcf, "fx-card-orla", "Orla O'Brien-Quinn Jr.", "O'Brien-Quinn", "Orla", servicetest.NoCardPhone)
	env := servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true, Blocked: []string{servicetest.BlockedPhone}})
	cs, _ := toolSession(t, env, Filters{})

	// The control: her name resolves to her thread.
	r := callTool(t, cs, "get_conversation_messages", map[string]any{"chat": "Orla"})
	if r.isError || !strings.Contains(r.text, "Orla") {
		t.Fatalf("Orla: %s", clipTest(r.text))
	}
	leaks := []string{"Orla", "O'Brien", "Quinn", "0099"}
	for _, ref := range []string{`" OR ""="`, `' OR 1=1 --`, `Or%`, `Or*`, `O_la`, `%`, `*`, `_`, `-`, `'`, `.`, `+1`, `@`} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"get_conversation_messages", map[string]any{"chat": ref}},
			{"get_response_stats", map[string]any{"chat": ref}},
			{"search_messages", map[string]any{"query": "dinner", "contact": ref}},
			{"search_messages", map[string]any{"query": "dinner", "conversation_id": ref}},
			{"get_contact_dossier", map[string]any{"contact_id": ref}},
		} {
			r := callTool(t, cs, c.tool, c.args)
			if !r.isError || !strings.Contains(r.text, "no contact or conversation matches") {
				t.Errorf("%s(%v) = isError %v %q, want the unknown-name answer", c.tool, c.args, r.isError, clipTest(r.text))
			}
			for _, l := range leaks {
				if strings.Contains(r.text, l) || strings.Contains(string(r.raw), l) {
					t.Errorf("%s(%v) names %q: %s", c.tool, c.args, l, clipTest(r.text))
				}
			}
		}
		r := callTool(t, cs, "lookup_contacts", map[string]any{"name": ref})
		if n, _ := r.data["match_count"].(float64); r.isError || n != 0 {
			t.Errorf("lookup_contacts(%q) = isError %v %s, want no match", ref, r.isError, clipTest(r.text))
		}
	}
}
