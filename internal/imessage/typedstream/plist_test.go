package typedstream

import (
	"os"
	"testing"

	"howett.net/plist"
)

// decodePlistTexts reads an edit-history plist and decodes the attributedBody
// of every edit ("ec" → part → [{t: typedstream}]) in part, then item order.
func decodePlistTexts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if _, err := plist.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ec, _ := doc["ec"].(map[string]any)
	var out []string
	for _, part := range sortedKeys(ec) {
		items, _ := ec[part].([]any)
		for _, it := range items {
			blob, ok := it.(map[string]any)["t"].([]byte)
			if !ok {
				continue
			}
			text, runs, err := AttributedBody(blob)
			if err != nil {
				t.Fatalf("%s part %s: %v", path, part, err)
			}
			checkRuns(t, text, runs)
			out = append(out, text)
		}
	}
	return out
}
