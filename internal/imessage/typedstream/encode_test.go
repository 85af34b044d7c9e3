package typedstream

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// sameRun compares the fields a caller sets when encoding.
func sameRun(a, b Run) bool {
	a.Attrs, b.Attrs = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestEncodeAttributedBodyRoundTrip(t *testing.T) {
	long := strings.Repeat("Lorem ipsum dolor sit amet. ", 10) // 280 bytes: 0x81 length
	huge := strings.Repeat("0123456789abcdef", 2100)           // 33600 bytes: 0x82 length
	obj := "\ufffc"
	tests := []struct {
		name string
		text string
		runs []Run
		want []Run // nil: same as runs (with Location/Length/Start/End filled)
	}{
		{name: "empty", text: ""},
		{name: "plain default run", text: "Noter test", want: []Run{{Location: 0, Length: 10, Start: 0, End: 10, Part: 0}}},
		{name: "long 0x81", text: long, want: []Run{{Length: 280, End: 280, Part: 0}}},
		{name: "huge 0x82", text: huge, want: []Run{{Length: 33600, End: 33600, Part: 0}}},
		{name: "emoji and surrogates", text: "🅱️Bold_Underline", runs: []Run{
			{Start: 0, End: 7, Part: 0},
			{Start: 7, End: 11, Part: 0, Styles: []string{"bold"}},
			{Start: 11, End: 12, Part: 0},
			{Start: 12, End: 21, Part: 0, Styles: []string{"underline"}},
		}},
		{name: "by utf16 length", text: "𝖍𝖊 x", runs: []Run{{Length: 4, Part: 0}, {Length: 2, Part: 1}}},
		{name: "multipart attachments", text: obj + "test 1" + obj + "test 2", runs: []Run{
			{Start: 0, End: 3, Part: 0, AttachmentGUID: "at_0_F0668F79-20C2-49C9-A87F-1B007ABB0CED", Filename: "IMG_0001.HEIC"},
			{Start: 3, End: 9, Part: 1},
			{Start: 9, End: 12, Part: 2, AttachmentGUID: "at_2_F0668F79-20C2-49C9-A87F-1B007ABB0CED"},
			{Start: 12, End: 18, Part: 3},
		}},
		{name: "mention link code detectors", text: "Hi Dad see https://example.com/x code 123456 call 555-1234", runs: []Run{
			{Start: 0, End: 3, Part: 0},
			{Start: 3, End: 6, Part: 0, Mention: "+15558675309"},
			{Start: 6, End: 11, Part: 0},
			{Start: 11, End: 32, Part: 0, Link: "https://example.com/x", Detected: []string{"data"}},
			{Start: 32, End: 38, Part: 0},
			{Start: 38, End: 44, Part: 0, OneTimeCode: true, Detected: []string{"data"}},
			{Start: 44, End: 50, Part: 0},
			{Start: 50, End: 58, Part: 0, Link: "tel:5551234", Detected: []string{"phone", "address", "money", "calendar", "data"}},
		}},
		{name: "styles and effects", text: "all four big", runs: []Run{
			{Start: 0, End: 8, Part: 0, Styles: []string{"bold", "italic", "underline", "strikethrough"}},
			{Start: 8, End: 9, Part: 0},
			{Start: 9, End: 12, Part: 0, Styles: []string{"effect:big"}},
		}},
		{name: "unknown effect number", text: "x", runs: []Run{{Start: 0, End: 1, Part: 0, Styles: []string{"effect:77"}}}},
		{name: "transcription", text: obj, runs: []Run{{Start: 0, End: 3, Part: 0, AttachmentGUID: "4C339597", Transcription: "This is a test"}}},
		{name: "no part", text: "ab", runs: []Run{{Start: 0, End: 2, Part: -1, Styles: []string{"italic"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blob, err := EncodeAttributedBody(tc.text, tc.runs)
			if err != nil {
				t.Fatal(err)
			}
			text, runs, err := AttributedBody(blob)
			if err != nil {
				t.Fatalf("decode own output: %v", err)
			}
			if text != tc.text {
				t.Fatalf("text = %q, want %q", text, tc.text)
			}
			checkRuns(t, text, runs)
			want := tc.want
			if want == nil {
				want = tc.runs
			}
			if len(runs) != len(want) {
				t.Fatalf("got %d runs, want %d", len(runs), len(want))
			}
			for i := range want {
				w := want[i]
				w.Location, w.Length, w.Start, w.End = runs[i].Location, runs[i].Length, runs[i].Start, runs[i].End
				if tc.runs != nil && tc.runs[i].End != 0 && (runs[i].Start != tc.runs[i].Start || runs[i].End != tc.runs[i].End) {
					t.Errorf("run %d at [%d,%d), want [%d,%d)", i, runs[i].Start, runs[i].End, tc.runs[i].Start, tc.runs[i].End)
				}
				if tc.runs != nil && tc.runs[i].End == 0 && runs[i].Length != tc.runs[i].Length {
					t.Errorf("run %d length %d, want %d", i, runs[i].Length, tc.runs[i].Length)
				}
				if !sameRun(runs[i], w) {
					t.Errorf("run %d = %+v\nwant %+v", i, runs[i], w)
				}
			}
			// Re-encoding the decoded runs (now with Attrs) is stable.
			again, err := EncodeAttributedBody(text, runs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, blob) {
				t.Errorf("re-encoding decoded runs changed the bytes")
			}
		})
	}
}

func TestEncodeAttributedBodyDictionaryReuse(t *testing.T) {
	runs := []Run{
		{Start: 0, End: 1, Part: 0, Styles: []string{"bold"}},
		{Start: 1, End: 2, Part: 0},
		{Start: 2, End: 3, Part: 0, Styles: []string{"bold"}},
		{Start: 3, End: 4, Part: 0},
	}
	blob, err := EncodeAttributedBody("abcd", runs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	root := a.Groups[0].Values[0].(*Object)
	var nums []int64
	dicts := 0
	for _, g := range root.Groups {
		switch g.Encoding {
		case "iI":
			nums = append(nums, int64(g.Values[0].(Int)))
		case "@":
			if _, ok := g.Values[0].(*Object).Decoded.(Dictionary); ok {
				dicts++
			}
		}
	}
	if want := []int64{1, 2, 1, 2}; !reflect.DeepEqual(nums, want) {
		t.Errorf("dictionary numbers %v, want %v", nums, want)
	}
	if dicts != 2 {
		t.Errorf("%d dictionaries written, want 2", dicts)
	}
	if got := root.Class.Chain(); !reflect.DeepEqual(got, []string{"NSMutableAttributedString", "NSAttributedString", "NSObject"}) {
		t.Errorf("root chain %v", got)
	}
	if got := root.Groups[0].Values[0].(*Object).Class.Chain(); !reflect.DeepEqual(got, []string{"NSMutableString", "NSString", "NSObject"}) {
		t.Errorf("string chain %v", got)
	}
}

func TestEncodeAttributedBodyErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		runs []Run
	}{
		{"invalid utf8", "a\xffb", nil},
		{"gap", "abcd", []Run{{Start: 0, End: 1}, {Start: 2, End: 4}}},
		{"short", "abcd", []Run{{Start: 0, End: 3}}},
		{"past end", "ab", []Run{{Start: 0, End: 3}}},
		{"inside char", "é", []Run{{Start: 0, End: 1}, {Start: 1, End: 2}}},
		{"utf16 split surrogate", "𝖍", []Run{{Length: 1}, {Length: 1}}},
		{"utf16 too long", "ab", []Run{{Length: 3}}},
		{"unknown style", "ab", []Run{{Start: 0, End: 2, Styles: []string{"blink"}}}},
		{"unknown detector", "ab", []Run{{Start: 0, End: 2, Detected: []string{"tea"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := EncodeAttributedBody(tc.text, tc.runs); err == nil {
				t.Fatalf("no error, wrote %d bytes", len(b))
			}
		})
	}
}

// TestEncodeFixtures re-encodes every shared fixture two ways: the generic
// model (Encode(Decode(b)) must give b back exactly) and the attributed
// body through EncodeAttributedBody (which must decode to the same text and
// runs; how many also match byte for byte is logged).
func TestEncodeFixtures(t *testing.T) {
	// Fixtures written by current Messages (NSMutableAttributedString,
	// keys in the order the encoder uses) that must come out identical.
	mustMatch := map[string]bool{"AttributedBodyTextOnly": true, "LongMessage": true, "Mention": true, "MultiPart": true, "WeirdText": true}
	for _, sub := range []string{"typedstream/attributed", "typedstream/foundation"} {
		files := fixtureFiles(t, fixtureDir(t, sub))
		exact, total := 0, 0
		for _, name := range sortedKeys(files) {
			b := files[name]
			a, err := Decode(b)
			if err != nil {
				continue // ExtraData
			}
			again, err := Encode(a)
			if err != nil {
				t.Errorf("%s: Encode: %v", name, err)
				continue
			}
			if !bytes.Equal(again, b) {
				t.Errorf("%s: Encode(Decode(b)) differs from b", name)
			}
			if sub != "typedstream/attributed" {
				continue
			}
			text, runs, err := AttributedBody(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			enc, err := EncodeAttributedBody(text, runs)
			if err != nil {
				t.Errorf("%s: EncodeAttributedBody: %v", name, err)
				continue
			}
			text2, runs2, err := AttributedBody(enc)
			if err != nil || text2 != text || len(runs2) != len(runs) {
				t.Errorf("%s: re-encoded body decodes to %q (%d runs), %v", name, text2, len(runs2), err)
				continue
			}
			for i := range runs {
				if !sameRun(runs[i], runs2[i]) || len(runs[i].Attrs) != len(runs2[i].Attrs) {
					t.Errorf("%s: run %d = %+v, want %+v", name, i, runs2[i], runs[i])
				}
			}
			total++
			if bytes.Equal(enc, b) {
				exact++
				t.Logf("%s: EncodeAttributedBody reproduces the fixture byte for byte", name)
			} else if mustMatch[name] {
				t.Errorf("%s: EncodeAttributedBody no longer reproduces the fixture", name)
			}
		}
		if sub == "typedstream/attributed" {
			t.Logf("EncodeAttributedBody byte-exact on %d of %d attributed fixtures", exact, total)
		}
	}
}
