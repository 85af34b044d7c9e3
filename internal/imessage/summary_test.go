package imessage

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

// sharedFixtures returns ../shared/fixtures next to the repository (GPL
// fixtures are read in place, never copied), or skips the test.
func sharedFixtures(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared fixtures not present (%s)", dir)
	}
	return dir
}

// TestSummaryFixtures decodes the real message_summary_info plists of
// edited and unsent messages and compares them with expected.json.
func TestSummaryFixtures(t *testing.T) {
	dir := sharedFixtures(t)
	raw, err := os.ReadFile(filepath.Join(dir, "plist", "expected.json"))
	if err != nil {
		t.Skip(err)
	}
	var expected map[string]struct {
		Decoded struct {
			EC map[string][]struct {
				T struct {
					Text string `json:"typedstream_text"`
				} `json:"t"`
				D float64 `json:"d"`
			} `json:"ec"`
			OTR map[string]any `json:"otr"`
			RP  []int          `json:"rp"`
		} `json:"decoded"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range sortedKeys(expected) {
		if !strings.HasPrefix(name, "edited_message/") {
			continue
		}
		n++
		want := expected[name].Decoded
		t.Run(strings.TrimPrefix(name, "edited_message/"), func(t *testing.T) {
			blob, err := os.ReadFile(filepath.Join(dir, "plist", name))
			if err != nil {
				t.Fatal(err)
			}
			var m model.Message
			m.Text = "current text"
			applySummary(blob, 0, 0, &m, slog.Default())
			var wantEdits []model.Edit
			parts := make([]int, 0, len(want.EC))
			for k := range want.EC {
				p, _ := strconv.Atoi(k)
				parts = append(parts, p)
			}
			sort.Ints(parts)
			for _, p := range parts {
				for _, v := range want.EC[strconv.Itoa(p)] {
					wantEdits = append(wantEdits, model.Edit{Part: p, Time: appleSeconds(v.D), Text: v.T.Text})
				}
			}
			if len(m.Edits) != len(wantEdits) {
				t.Fatalf("edits = %+v, want %+v", m.Edits, wantEdits)
			}
			for i := range wantEdits {
				g, w := m.Edits[i], wantEdits[i]
				if g.Part != w.Part || g.Text != w.Text || !g.Time.Equal(w.Time) {
					t.Errorf("edit %d = %+v, want %+v", i, g, w)
				}
			}
			if m.Edited != (len(wantEdits) > 0) {
				t.Errorf("Edited = %v", m.Edited)
			}
			wantRP := slices.Clone(want.RP)
			sort.Ints(wantRP)
			if !slices.Equal(m.UnsentParts, wantRP) {
				t.Errorf("UnsentParts = %v, want %v", m.UnsentParts, wantRP)
			}
			allUnsent := len(wantRP) > 0
			for k := range want.OTR {
				p, _ := strconv.Atoi(k)
				if !slices.Contains(wantRP, p) {
					allUnsent = false
				}
			}
			if m.Unsent != allUnsent {
				t.Errorf("Unsent = %v, want %v", m.Unsent, allUnsent)
			}
		})
	}
	if n == 0 {
		t.Fatal("no edited_message fixtures in expected.json")
	}
}

func TestSummaryMalformed(t *testing.T) {
	for _, blob := range [][]byte{
		[]byte("bplist00 ec rp but not really a plist"),
		[]byte("<plist><dict><key>rp</key><string>x</string></dict></plist>"),
		{0x52, 'e', 'c'},
	} {
		var m model.Message
		m.Text = "kept"
		applySummary(blob, 0, 0, &m, slog.Default())
		if m.Text != "kept" || m.Edited || m.Unsent || len(m.Edits) != 0 {
			t.Errorf("%q: %+v", blob, m)
		}
	}
}
