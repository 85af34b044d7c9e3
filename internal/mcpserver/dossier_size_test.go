package mcpserver

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

const compactDossierBytes = 6 << 10

// TestCompactDossierOnEveryDemoPerson: get_contact_dossier answers a
// compact dossier by default — background, open commitments, recent
// history — of at most compactDossierBytes for every person of the demo
// data set at its default size; detail "full" adds the long sections
// (past and settled commitments, quarters, topics, monthly volume).
func TestCompactDossierOnEveryDemoPerson(t *testing.T) {
	env := servicetest.Demo(t, demo.DefaultMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	tried := 0
	for _, p := range demo.People() {
		ref := p.Phone
		if ref == "" {
			ref = p.Email
		}
		r := callTool(t, cs, "get_contact_dossier", map[string]any{"contact_id": ref})
		if r.isError {
			continue // no one-to-one conversation with this person
		}
		tried++
		t.Logf("%-16s compact %5d bytes", p.First+" "+p.Last, len(r.text))
		if len(r.text) > compactDossierBytes {
			t.Errorf("%s %s: the compact dossier is %d bytes, over %d", p.First, p.Last, len(r.text), compactDossierBytes)
		}
		for _, key := range []string{"background", "active_commitments", "subject"} {
			if _, ok := r.data[key]; !ok {
				t.Errorf("%s: the compact dossier lacks %s", p.First, key)
			}
		}
		full := callTool(t, cs, "get_contact_dossier", map[string]any{"contact_id": ref, "detail": "full"})
		if full.isError {
			t.Fatalf("%s: detail full: %s", p.First, full.text)
		}
		_, compactEx := r.data["relationship_history"].(map[string]any)["last_significant_exchange"]
		_, fullEx := full.data["relationship_history"].(map[string]any)["last_significant_exchange"]
		if compactEx != fullEx {
			t.Errorf("%s: last significant exchange in the compact dossier %v, in the full one %v", p.First, compactEx, fullEx)
		}
		if q, _ := full.data["relationship_history"].(map[string]any)["quarters"].([]any); len(q) == 0 {
			t.Errorf("%s: detail full has no quarters", p.First)
		}
		if len(full.text) <= len(r.text) {
			t.Errorf("%s: detail full (%d bytes) is not longer than the compact dossier (%d)", p.First, len(full.text), len(r.text))
		}
	}
	if tried < 10 {
		t.Fatalf("only %d demo people have a dossier: the test proves little", tried)
	}
	r := callTool(t, cs, "get_contact_dossier", map[string]any{"contact_id": "+14155550134", "detail": "everything"})
	if !r.isError || !strings.Contains(r.text, "detail") {
		t.Errorf("detail everything: %v %s", r.isError, r.text)
	}
}

// TestOnePageTruncated: an answer says it was cut in one field,
// page.truncated (with page.note and page.next_cursor), never in a second
// top-level "truncated" that could disagree with it.
func TestOnePageTruncated(t *testing.T) {
	for _, tool := range Inventory() {
		s, ok := tool.OutputSchema.(*jsonschema.Schema)
		if !ok {
			t.Fatalf("%s: output schema %T", tool.Name, tool.OutputSchema)
		}
		if _, page := s.Properties["page"]; page {
			if _, dup := s.Properties["truncated"]; dup {
				t.Errorf("%s: a top-level truncated beside page.truncated", tool.Name)
			}
		}
	}
	env := servicetest.RedTeam(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	r := callTool(t, cs, "list_conversations", map[string]any{"limit": 1})
	page, _ := r.data["page"].(map[string]any)
	if _, dup := r.data["truncated"]; dup || page["truncated"] != true || page["next_cursor"] == nil {
		t.Errorf("list_conversations limit 1: truncated %v, page %v", r.data["truncated"], page)
	}
}

// TestNoObjectReplacementCharacter: the U+FFFC that Messages keeps in a
// body where an attachment sat ("\ufffcdinner tonight") never reaches an
// answer — not in bodies, context messages or snippets; the attachment is
// listed in attachments.
func TestNoObjectReplacementCharacter(t *testing.T) {
	env := servicetest.HostileNames(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	reached := false
	for _, c := range []rtCall{
		{tool: "get_conversation_messages", args: map[string]any{"conversation_id": servicetest.HostileGroupID, "limit": 200}},
		{tool: "search_messages", args: map[string]any{"query": "Friday", "mode": "substring", "context": 3}},
		{tool: "review_messages", args: map[string]any{"days": 2, "context": 10}},
	} {
		r := callTool(t, cs, c.tool, c.args)
		if strings.Contains(r.text, "\ufffc") || strings.Contains(string(r.raw), "\ufffc") {
			t.Errorf("%s: an answer carries U+FFFC: %.300s", c.tool, r.text[strings.Index(r.text, "\ufffc")-min(200, strings.Index(r.text, "\ufffc")):])
		}
		reached = reached || strings.Contains(r.text, "rt-names-photo")
	}
	if !reached {
		t.Fatal("no answer reached the attachment message: the test proves nothing")
	}
}
