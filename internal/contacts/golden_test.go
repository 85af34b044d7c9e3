package contacts

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestVCardGolden parses the hand-built exports in testdata/vcard (shaped
// like Apple Contacts, Google Contacts, Android 2.1 and RFC 6350 output)
// and compares the cards with the .golden.json next to each. Run with
// -update after a deliberate change and review the diff.
func TestVCardGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "vcard", "*.vcf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vcard fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cards, err := ReadVCardFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(cards, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(f, ".vcf") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestVCardGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from golden:\n%s", f, got)
			}
		})
	}
}
