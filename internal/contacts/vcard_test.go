package contacts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/model"
)

func parseOne(t *testing.T, src string) model.Contact {
	t.Helper()
	cards, err := ParseVCards(strings.NewReader(src))
	if err != nil {
		t.Fatalf("ParseVCards: %v", err)
	}
	if len(cards) != 1 {
		t.Fatalf("got %d cards, want 1: %+v", len(cards), cards)
	}
	return cards[0]
}

func TestVCardFields(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want model.Contact
	}{
		{
			name: "v3 crlf",
			src: "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Vossough;Angel;M.;Dr.;\r\nFN:Angel Vossough\r\nNICKNAME:Angie,A\r\n" +
				"ORG:Acme\\, Inc.;Sales\r\nTEL;TYPE=HOME,VOICE:+1 (415) 555-0000\r\nTEL;TYPE=CELL:(415) 555-1234\r\n" +
				"EMAIL;TYPE=INTERNET:Angel@Example.com\r\nUID:abc-123\r\nREV:2024-05-06T07:08:09Z\r\nEND:VCARD\r\n",
			want: model.Contact{Source: "vcard", ID: "abc-123", First: "Angel", Last: "Vossough", Middle: "M.",
				Nickname: "Angie", Organization: "Acme, Inc.", FullName: "Angel Vossough",
				Phones: []string{"(415) 555-1234", "+1 (415) 555-0000"}, Emails: []string{"Angel@Example.com"},
				Modified: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}, // literal date: parsed from the fixture
		},
		{
			name: "folded lines lf",
			src:  "BEGIN:VCARD\nVERSION:3.0\nFN:Jean-Baptiste\n  Emmanuel Zorg\nN:Zorg;Jean-Baptiste\n\tEmmanuel;;;\nTEL:+33 6 12\n  34 56 78\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", First: "Jean-BaptisteEmmanuel", Last: "Zorg",
				FullName: "Jean-Baptiste Emmanuel Zorg", Phones: []string{"+33 6 12 34 56 78"}},
		},
		{
			name: "escaped commas semicolons newlines",
			src:  "BEGIN:VCARD\nVERSION:3.0\nN:O\\;Brien;Pat\\,rick;;;\nFN:Pat\\, O\\;Brien\\nJr\nORG:A\\;B;C\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", First: "Pat,rick", Last: "O;Brien", FullName: "Pat, O;Brien\nJr", Organization: "A;B"},
		},
		{
			name: "v4 tel uri and quoted types",
			src: "BEGIN:VCARD\nVERSION:4.0\nFN:Zoë Ĳsselmeer\nN:Ĳsselmeer;Zoë;;;\nTEL;VALUE=uri;TYPE=work:tel:+1-415-555-0000\nTEL;VALUE=uri;TYPE=\"voice,cell\";PREF=1:tel:+1-415-555-9876\n" +
				"EMAIL:mailto:zoe@example.nl\nUID:urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1\nREV:20240102T030405Z\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", ID: "urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1", First: "Zoë",
				Last: "Ĳsselmeer", FullName: "Zoë Ĳsselmeer", Phones: []string{"+1-415-555-9876", "+1-415-555-0000"},
				Emails: []string{"zoe@example.nl"}, Modified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}, // literal date: parsed from the fixture
		},
		{
			name: "v21 quoted-printable soft breaks and charset",
			src: "BEGIN:VCARD\r\nVERSION:2.1\r\nN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=\r\n=BCrgen;;;\r\n" +
				"FN;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:J=C3=BCrgen M=C3=BC=\r\nller\r\nTEL;CELL;VOICE:0151 12345678\r\nEND:VCARD\r\n",
			want: model.Contact{Source: "vcard", First: "Jürgen", Last: "Müller", FullName: "Jürgen Müller",
				Phones: []string{"0151 12345678"}},
		},
		{
			name: "v21 latin1 charset",
			src:  "BEGIN:VCARD\nVERSION:2.1\nN;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:Gar=E7on;Fran=E7ois\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", First: "François", Last: "Garçon"},
		},
		{
			name: "unlabelled latin1 bytes read as windows-1252",
			src:  "BEGIN:VCARD\nVERSION:2.1\nFN:Ren\xe9e \x93Q\x94\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", FullName: "Renée \u201cQ\u201d"},
		},
		{
			name: "base64 value",
			src:  "BEGIN:VCARD\nVERSION:3.0\nFN;ENCODING=b;CHARSET=UTF-8:w4VzYSBTdHLDtm0=\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", FullName: "Åsa Ström"},
		},
		{
			name: "grouped properties with apple labels",
			src: "BEGIN:VCARD\nVERSION:3.0\nFN:Kim\nitem1.TEL:+1 212 555 0100\nitem1.X-ABLabel:_$!<Work>!$_\n" +
				"item2.TEL;type=pref:+1 212 555 0199\nitem2.X-ABLabel:_$!<Mobile>!$_\nitem3.EMAIL:kim@example.com\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", FullName: "Kim", Phones: []string{"+1 212 555 0199", "+1 212 555 0100"},
				Emails: []string{"kim@example.com"}},
		},
		{
			name: "photo discarded and lowercase names",
			src: "begin:vcard\nversion:3.0\nfn:Lo\nphoto;encoding=b;type=JPEG:" + strings.Repeat("QUJD", 5000) + "\n " +
				strings.Repeat("QUJD", 5000) + "\ntel:555-0100\nend:vcard\n",
			want: model.Contact{Source: "vcard", FullName: "Lo", Phones: []string{"555-0100"}},
		},
		{
			name: "agent card nested inside is not a second card",
			src: "BEGIN:VCARD\nVERSION:2.1\nFN:Boss\nAGENT:\nBEGIN:VCARD\nVERSION:2.1\nFN:Assistant\nTEL:111\nEND:VCARD\n" +
				"TEL:+1 415 555 1111\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", FullName: "Boss", Phones: []string{"+1 415 555 1111"}},
		},
		{
			name: "duplicate numbers kept once",
			src:  "BEGIN:VCARD\nVERSION:3.0\nFN:Dup\nTEL:555\nTEL:555\nEND:VCARD\n",
			want: model.Contact{Source: "vcard", FullName: "Dup", Phones: []string{"555"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseOne(t, tc.src)
			if tc.want.ID == "" {
				if !strings.HasPrefix(got.ID, "sha256:") {
					t.Errorf("ID = %q, want a content hash", got.ID)
				}
				tc.want.ID = got.ID
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestVCardEncodingsAndLineEnds(t *testing.T) {
	card := "BEGIN:VCARD\nVERSION:3.0\nFN:Zoë\nTEL:+33 6 12 34 56 78\nEND:VCARD\n"
	utf16le := func(s string, bom bool) []byte {
		var buf bytes.Buffer
		if bom {
			buf.Write([]byte{0xFF, 0xFE})
		}
		for _, u := range utf16.Encode([]rune(s)) {
			_ = binary.Write(&buf, binary.LittleEndian, u)
		}
		return buf.Bytes()
	}
	tests := map[string][]byte{
		"lf":               []byte(card),
		"crlf":             []byte(strings.ReplaceAll(card, "\n", "\r\n")),
		"cr only":          []byte(strings.ReplaceAll(card, "\n", "\r")),
		"utf8 bom":         append([]byte("\xEF\xBB\xBF"), strings.ReplaceAll(card, "\n", "\r\n")...),
		"utf16le":          utf16le(strings.ReplaceAll(card, "\n", "\r\n"), true),
		"no final newline": []byte(strings.TrimSuffix(card, "\n")),
		"blank lines":      []byte("\n\n" + strings.ReplaceAll(card, "\n", "\n\n")),
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			cards, err := ParseVCards(bytes.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			if len(cards) != 1 || cards[0].FullName != "Zoë" || !reflect.DeepEqual(cards[0].Phones, []string{"+33 6 12 34 56 78"}) {
				t.Fatalf("got %+v", cards)
			}
		})
	}
}

func TestVCardManyCardsAndProblems(t *testing.T) {
	src := "junk before\nBEGIN:VCARD\nVERSION:3.0\nFN:One\nEND:VCARD\nBEGIN:VCARD\nVERSION:3.0\nFN:Two\nTEL:1\nEND:VCARD\n" +
		"BEGIN:VCARD\nVERSION:3.0\nPHOTO:only a photo\nEND:VCARD\n" + // nothing useful: dropped
		"BEGIN:VCARD\nVERSION:3.0\nFN:Three\nTEL;broken\nEND:VCARD\n" + // malformed line inside a card
		"BEGIN:VCARD\nVERSION:3.0\nFN:Unterminated\n"
	cards, err := ParseVCards(strings.NewReader(src))
	var names []string
	for _, c := range cards {
		names = append(names, c.Name())
	}
	if want := []string{"One", "Two", "Three"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *ParseError", err)
	}
	if pe.Line != 18 || pe.Skipped != 2 || !strings.Contains(err.Error(), "and 1 more") {
		t.Errorf("ParseError = %+v (%v), want line 18 with 2 problems", pe, err)
	}
}

func TestVCardOverlongValueSkipped(t *testing.T) {
	src := "BEGIN:VCARD\nVERSION:3.0\nFN:" + strings.Repeat("x", maxValueLine+10) + "\nTEL:+14155551234\nEND:VCARD\n"
	cards, err := ParseVCards(strings.NewReader(src))
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "FN value longer") {
		t.Fatalf("err = %v, want an overlong FN problem", err)
	}
	if len(cards) != 1 || cards[0].FullName != "" || cards[0].Phones[0] != "+14155551234" {
		t.Fatalf("cards = %+v", cards)
	}
}

func TestVCardHashIDStable(t *testing.T) {
	a := parseOne(t, "BEGIN:VCARD\nVERSION:3.0\nFN:Sam\nTEL:555\nREV:2020-01-01\nEND:VCARD\n")
	b := parseOne(t, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Sam\r\nTEL:555\r\nREV:2024-01-01\r\nPHOTO:xyz\r\nEND:VCARD\r\n")
	c := parseOne(t, "BEGIN:VCARD\nVERSION:3.0\nFN:Sam\nTEL:556\nEND:VCARD\n")
	if a.ID != b.ID {
		t.Errorf("same card re-exported: ids %q and %q differ", a.ID, b.ID)
	}
	if a.ID == c.ID {
		t.Errorf("different cards share id %q", a.ID)
	}
}

func TestReadVCardFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.vcf")
	if err := os.WriteFile(p, []byte("BEGIN:VCARD\nVERSION:3.0\nFN:A\nEND:VCARD\nBEGIN:VCARD\nFN:B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cards, err := ReadVCardFile(p)
	if len(cards) != 1 || err == nil || !strings.Contains(err.Error(), "c.vcf") {
		t.Fatalf("cards %v err %v", cards, err)
	}
	if _, err := ReadVCardFile(filepath.Join(dir, "missing.vcf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestCleanLabel(t *testing.T) {
	for in, want := range map[string]string{"_$!<Mobile>!$_": "Mobile", "iPhone": "iPhone", " _$!<Home>!$_ ": "Home", "_$!<": "_$!<"} {
		if got := CleanLabel(in); got != want {
			t.Errorf("CleanLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzVCard checks that no input panics, that every string produced is
// valid UTF-8, that parsing is deterministic, and that no more cards come
// out than BEGIN:VCARD lines went in.
func FuzzVCard(f *testing.F) {
	for _, s := range []string{
		"BEGIN:VCARD\r\nVERSION:3.0\r\nN:Doe;John;;;\r\nFN:John Doe\r\nTEL;TYPE=CELL:+1 415 555 1234\r\nEND:VCARD\r\n",
		"BEGIN:VCARD\nVERSION:2.1\nN;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:M=C3=BC=\nller;;;\nEND:VCARD\n",
		"\xEF\xBB\xBFBEGIN:VCARD\nVERSION:4.0\nTEL;VALUE=uri:tel:+1-555\nitem1.EMAIL:a@b\nitem1.X-ABLabel:_$!<Home>!$_\nEND:VCARD",
		"BEGIN:VCARD\nFN;ENCODING=b:w4Vz\nAGENT:\nBEGIN:VCARD\nEND:VCARD\nEND:VCARD\n",
		"\xFF\xFEB\x00E\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cards, err := ParseVCards(bytes.NewReader(data))
		again, err2 := ParseVCards(bytes.NewReader(data))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(cards, again) {
			t.Fatalf("parse is not deterministic")
		}
		utf16BOM := len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF)
		if n := bytes.Count(bytes.ToUpper(data), []byte("BEGIN")); !utf16BOM && len(cards) > n {
			t.Fatalf("%d cards from %d BEGIN lines", len(cards), n)
		}
		for _, c := range cards {
			fields := append([]string{c.ID, c.First, c.Last, c.Middle, c.Nickname, c.Organization, c.FullName}, c.Phones...)
			for _, s := range append(fields, c.Emails...) {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 %q", s)
				}
			}
			if c.ID == "" || c.Source != SourceVCard {
				t.Fatalf("card without id or source: %+v", c)
			}
		}
	})
}

// BenchmarkParseVCards parses an export of 1,000 Apple-style cards, each
// with a 4 KB folded photo that the parser must skip.
func BenchmarkParseVCards(b *testing.B) {
	var buf bytes.Buffer
	photo := strings.Repeat(" QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5\r\n", 56)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&buf, "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Last%d;First%d;;;\r\nFN:First%d Last%d\r\n"+
			"item1.TEL;type=pref:+1 (415) 555-%04d\r\nitem1.X-ABLabel:_$!<Mobile>!$_\r\nEMAIL;type=INTERNET:p%d@example.com\r\n"+
			"PHOTO;ENCODING=b;TYPE=JPEG:/9j/\r\n%sEND:VCARD\r\n", i, i, i, i, i, i, photo)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		cards, err := ParseVCards(bytes.NewReader(data))
		if err != nil || len(cards) != 1000 {
			b.Fatalf("%d cards, %v", len(cards), err)
		}
	}
}
