package addressbook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestCardsRoundTripByteForByte: parsing and encoding every card of the
// set gives its bytes back — folding, escapes, parameter spelling, the
// photo, X- fields and Apple's item groups included.
func TestCardsRoundTripByteForByte(t *testing.T) {
	for name, data := range cardFiles(t) {
		cards, err := ParseCards(data)
		if err != nil || len(cards) != 1 {
			t.Fatalf("%s: %d cards, %v", name, len(cards), err)
		}
		if got := cards[0].Encode(); !bytes.Equal(got, data) {
			t.Errorf("%s changed:\n got %q\nwant %q", name, got, data)
		}
	}
}

// TestUpdateKeepsWhatItDoesNotUnderstand: a write through the tools'
// Apply changes only the properties it names; every other line of a
// vCard 3 card (PHOTO folded over two lines, X-SOCIALPROFILE, a quoted
// parameter holding ":" and ";", CATEGORIES with an escaped comma, the
// item1 label) and of a vCard 4 card (a data: URI photo holding a comma,
// X-EVOLUTION-SPOUSE) is there afterwards byte for byte, in order.
func TestUpdateKeepsWhatItDoesNotUnderstand(t *testing.T) {
	org, note := "New Org", "changed"
	for _, name := range []string{"ana.vcf", "kenji.vcf"} {
		data, err := os.ReadFile(filepath.Join("testdata/cards", name))
		if err != nil {
			t.Fatal(err)
		}
		cards, _ := ParseCards(data)
		c := cards[0]
		c.Apply(Fields{Org: &org, Note: &note}, testclock.Anchor())
		out := string(c.Encode())
		back, err := ParseCards([]byte(out))
		if err != nil || back[0].View().Org != org {
			t.Fatalf("%s: read back %v, %+v", name, err, back)
		}
		// Every original physical line that is not ORG, NOTE or REV is
		// still there, in the same order.
		rest := out
		orig, _ := ParseCards(data)
		for _, p := range orig[0].Props {
			if p.Name == "ORG" || p.Name == "NOTE" || p.Name == "REV" {
				continue
			}
			i := strings.Index(rest, p.raw)
			if i < 0 {
				t.Errorf("%s: lost or reordered %q", name, p.raw)
				continue
			}
			rest = rest[i+len(p.raw):]
		}
	}
}

// TestGroupKindsAndMembers: both group kinds are read, and membership
// edits use the kind's own property.
func TestGroupKindsAndMembers(t *testing.T) {
	for _, tc := range []struct{ file, kind, prop string }{
		{"group-family.vcf", KindApple, "X-ADDRESSBOOKSERVER-MEMBER"},
		{"group-work.vcf", KindVCard4, "MEMBER"},
	} {
		data, _ := os.ReadFile(filepath.Join("testdata/cards", tc.file))
		cards, err := ParseCards(data)
		if err != nil {
			t.Fatal(err)
		}
		c := cards[0]
		if c.GroupKind() != tc.kind || len(c.Members()) != 2 {
			t.Errorf("%s: kind %q members %q", tc.file, c.GroupKind(), c.Members())
		}
		if !c.AddMember("new-uid") || c.AddMember("new-uid") || !strings.Contains(string(c.Encode()), tc.prop+":urn:uuid:new-uid\r\n") {
			t.Errorf("%s: add member wrote %q", tc.file, c.Encode())
		}
		if !c.RemoveMember(anaUID) || c.RemoveMember(anaUID) || strings.Contains(string(c.Encode()), anaUID) {
			t.Errorf("%s: remove member left %q", tc.file, c.Encode())
		}
	}
}
