package typedstream

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

type attributedExpect struct {
	DecodeOK       bool     `json:"decode_ok"`
	RootClassChain []string `json:"root_class_chain"`
	StringClass    string   `json:"string_class"`
	Text           string   `json:"text"`
	UTF8Len        int      `json:"text_utf8_len"`
	UTF16Len       int      `json:"text_utf16_len"`
	Ranges         []struct {
		AttrIndex  int64 `json:"attr_index"`
		UTF16Len   int   `json:"utf16_len"`
		Attributes any   `json:"attributes"`
		Inline     bool  `json:"attributes_inline"`
	} `json:"ranges"`
}

// TestAttributedFixtures decodes every attributedBody fixture and compares
// text, runs, dictionary numbers and every attribute with expected.json.
func TestAttributedFixtures(t *testing.T) {
	dir := fixtureDir(t, "typedstream/attributed")
	files := fixtureFiles(t, dir)
	var expected map[string]attributedExpect
	loadJSON(t, filepath.Join(dir, "expected.json"), &expected)
	if len(expected) != len(files) {
		t.Errorf("%d fixtures but %d expectations", len(files), len(expected))
	}
	for _, name := range sortedKeys(expected) {
		want := expected[name]
		t.Run(name, func(t *testing.T) {
			blob, ok := files[name]
			if !ok {
				t.Fatal("fixture file missing")
			}
			text, runs, err := AttributedBody(blob)
			a, derr := Decode(blob)
			if !want.DecodeOK {
				if err == nil || derr == nil {
					t.Fatalf("AttributedBody err=%v, Decode err=%v; both must fail", err, derr)
				}
				var se *SyntaxError
				if !errors.As(err, &se) || text != "" || runs != nil {
					t.Fatalf("want a *SyntaxError and no result, got %q %v %v", text, runs, err)
				}
				return
			}
			if err != nil || derr != nil {
				t.Fatalf("AttributedBody: %v; Decode: %v", err, derr)
			}
			if text != want.Text {
				t.Fatalf("text = %q, want %q", text, want.Text)
			}
			if len(text) != want.UTF8Len || len(utf16.Encode([]rune(text))) != want.UTF16Len {
				t.Errorf("lengths %d/%d, want %d/%d", len(text), utf16Len(text), want.UTF8Len, want.UTF16Len)
			}
			checkRuns(t, text, runs)
			if len(runs) != len(want.Ranges) {
				t.Fatalf("%d runs, want %d", len(runs), len(want.Ranges))
			}
			root := a.Groups[0].Values[0].(*Object)
			if got := root.Class.Chain(); !reflect.DeepEqual(got, want.RootClassChain) {
				t.Errorf("root chain %v, want %v", got, want.RootClassChain)
			}
			if got := root.Groups[0].Values[0].(*Object).Class.Name; got != want.StringClass {
				t.Errorf("string class %s, want %s", got, want.StringClass)
			}
			var nums []int64
			inline := 0
			for i, g := range root.Groups {
				if g.Encoding == "iI" {
					nums = append(nums, int64(g.Values[0].(Int)))
					if i+1 < len(root.Groups) && root.Groups[i+1].Encoding == "@" {
						inline++
					}
				}
			}
			wantInline := 0
			for i, wr := range want.Ranges {
				if wr.Inline {
					wantInline++
				}
				if nums[i] != wr.AttrIndex {
					t.Errorf("run %d: dictionary number %d, want %d", i, nums[i], wr.AttrIndex)
				}
				if runs[i].Length != wr.UTF16Len {
					t.Errorf("run %d: length %d, want %d", i, runs[i].Length, wr.UTF16Len)
				}
				attrs := map[string]any{}
				for k, v := range runs[i].Attrs {
					attrs[k] = expectedAttr(v)
				}
				got := normalize(t, map[string]any{"dict": attrs})
				if !reflect.DeepEqual(got, normalize(t, wr.Attributes)) {
					t.Errorf("run %d attributes\n got %v\nwant %v", i, got, wr.Attributes)
				}
			}
			if inline != wantInline {
				t.Errorf("%d inline dictionaries, want %d", inline, wantInline)
			}
			// The generic model agrees with the fast path.
			as, ok := a.Root().(*AttributedString)
			if !ok || as.Text != text || len(as.Runs) != len(runs) {
				t.Fatalf("Decode root = %#v", a.Root())
			}
			for i := range runs {
				if !sameRun(as.Runs[i], runs[i]) {
					t.Errorf("run %d: Decode %+v, AttributedBody %+v", i, as.Runs[i], runs[i])
				}
			}
		})
	}
}

// TestAttributedRunFields pins the typed Run fields on the fixtures that
// carry them.
func TestAttributedRunFields(t *testing.T) {
	files := fixtureFiles(t, fixtureDir(t, "typedstream/attributed"))
	tests := []struct {
		file string
		run  int
		want Run // compared without Attrs, Location/Length/Start/End taken from got
	}{
		{"AttributedBodyTextOnly", 0, Run{Part: 0}},
		{"Attachment", 0, Run{Part: 0, AttachmentGUID: "at_0_2E5F12C3-E649-48AA-954D-3EA67C016BCC", Filename: "Messages Image(785748029).png"}},
		{"Attachment", 1, Run{Part: 1}},
		{"MultiPart", 4, Run{Part: 4, AttachmentGUID: "at_4_F0668F79-20C2-49C9-A87F-1B007ABB0CED"}},
		{"Mention", 1, Run{Part: 0, Mention: "+15558675309"}},
		{"Code", 0, Run{Part: 0, OneTimeCode: true, Detected: []string{"data"}}},
		{"Date", 1, Run{Part: 0, Detected: []string{"calendar"}}},
		{"Email", 0, Run{Part: 0, Link: "mailto:asdfghjklq@gmail.com", Detected: []string{"data"}}},
		{"PhoneNumber", 1, Run{Part: 0, Link: "tel:0000000000", Detected: []string{"phone"}}},
		{"URL", 0, Run{Part: 0, Link: "https://github.com/ReagentX/Logria", Detected: []string{"data"}}},
		{"TextStyles", 0, Run{Part: 0, Styles: []string{"bold"}}},
		{"TextStyles", 8, Run{Part: 0, Styles: []string{"bold", "italic", "underline", "strikethrough"}}},
		{"EditedWithFormatting", 0, Run{Part: 0, Styles: []string{"strikethrough"}}},
		{"Transcription", 0, Run{Part: 0, AttachmentGUID: "4C339597-EBBB-4978-9B87-521C0471A848", Transcription: "This is a test"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, runs, err := AttributedBody(files[tc.file])
			if err != nil {
				t.Fatal(err)
			}
			got := runs[tc.run]
			w := tc.want
			w.Location, w.Length, w.Start, w.End = got.Location, got.Length, got.Start, got.End
			if !sameRun(got, w) {
				t.Errorf("run %d = %+v\nwant %+v", tc.run, got, w)
			}
		})
	}
	// Byte offsets across multi-byte text: EmojiBoldUnderline's 🅱️ is 3
	// UTF-16 units and 7 bytes.
	_, runs, err := AttributedBody(files["EmojiBoldUnderline"])
	if err != nil {
		t.Fatal(err)
	}
	var got [][4]int
	for _, r := range runs {
		got = append(got, [4]int{r.Location, r.Length, r.Start, r.End})
	}
	want := [][4]int{{0, 3, 0, 7}, {3, 4, 7, 11}, {7, 1, 11, 12}, {8, 9, 12, 21}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EmojiBoldUnderline runs %v, want %v", got, want)
	}
}

type foundationExpect struct {
	ConsumedAll bool  `json:"consumed_all"`
	Groups      []any `json:"top_level_groups"`
}

// TestFoundationFixtures compares the raw decoded structure of every
// Foundation fixture (classes, chains, groups, values) with expected.json.
func TestFoundationFixtures(t *testing.T) {
	dir := fixtureDir(t, "typedstream/foundation")
	files := fixtureFiles(t, dir)
	var expected map[string]foundationExpect
	loadJSON(t, filepath.Join(dir, "expected.json"), &expected)
	if len(expected) != len(files) {
		t.Errorf("%d fixtures but %d expectations", len(files), len(expected))
	}
	for _, name := range sortedKeys(expected) {
		t.Run(name, func(t *testing.T) {
			a, err := Decode(files[name])
			if err != nil {
				t.Fatal(err)
			}
			var groups []any
			for _, g := range a.Groups {
				groups = append(groups, expectedGroup(g))
			}
			got, want := normalize(t, groups), normalize(t, expected[name].Groups)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("structure\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestFoundationInterpretation pins the interpreted values.
func TestFoundationInterpretation(t *testing.T) {
	files := fixtureFiles(t, fixtureDir(t, "typedstream/foundation"))
	url := func(s string) *URL { return &URL{Relative: s} }
	tests := []struct {
		file string
		want Value
	}{
		{"NSString", String("Hello, world")},
		{"NSMutableString", String("Hello, world")},
		{"NSArray", Array{String("a"), Number{Type: 'q', Int: 1}, String("b")}},
		{"NSArrayEmpty", Array{}},
		{"NSArrayWithNull", Array{String("x"), Null{}, String("y")}},
		{"NSMutableArray", Array{String("x"), Number{Type: 'q', Int: 2}}},
		{"NSSet", Set{String("s2"), String("s1")}},
		{"NSMutableSet", Set{String("m1")}},
		{"NSDictionary", Dictionary{Keys: []Value{String("k2"), String("k1")}, Values: []Value{String("v"), Number{Type: 'q', Int: 1}}}},
		{"NSMutableDictionary", Dictionary{Keys: []Value{String("key")}, Values: []Value{Number{Type: 'q', Int: 9}}}},
		{"NSData", Data{0xde, 0xad, 0xbe, 0xef, 0x00, 0x7f}},
		{"NSMutableData", Data{0xde, 0xad, 0xbe, 0xef}},
		{"NSDate", Date(21692800)},
		{"NSDateFractional", Date(700000000.523)},
		{"NSURL", url("https://example.com/path?q=1")},
		{"NSURLRelative", &URL{Base: url("https://example.com/dir/"), Relative: "page.html"}},
		{"NumberBool", Number{Type: 'c', Int: 1}},
		{"NumberDouble", Number{Type: 'd', Float: 100.5}},
		{"NumberFloat", Number{Type: 'f', Float: 3.5}},
		{"NumberInt", Number{Type: 'i', Int: 42}},
		{"NumberInt64", Number{Type: 'q', Int: -9000000000}},
		{"NestedData", Array{Data{1, 2}, Data{3, 4, 5}}},
		{"NestedStrings", Array{String("imm"), String("mut")}},
		{"NSAttributedString", &AttributedString{Text: "Hello, world", Runs: []Run{{Length: 12, End: 12, Part: -1, Attrs: map[string]Value{}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			a, err := Decode(files[tc.file])
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Root(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
	a, err := Decode(files["NSURLRelative"])
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Root().(*URL).String(); got != "https://example.com/dir/page.html" {
		t.Errorf("resolved URL %q", got)
	}
	if got, want := Date(21692800).Time(), time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Date.Time = %v, want %v", got, want)
	}
	if n, ok := (Number{Type: 'q', Int: -9000000000}).Int64(); !ok || n != -9000000000 {
		t.Errorf("Int64 = %d %v", n, ok)
	}
}

// TestEditHistoryPlists decodes the typedstream bodies nested in the
// message_summary_info edit-history fixtures.
func TestEditHistoryPlists(t *testing.T) {
	dir := fixtureDir(t, "plist")
	var expected map[string]struct {
		Decoded map[string]any `json:"decoded"`
	}
	loadJSON(t, filepath.Join(dir, "expected.json"), &expected)
	n := 0
	for _, name := range sortedKeys(expected) {
		if !strings.HasPrefix(name, "edited_message/") {
			continue
		}
		wantTexts := collectTexts(expected[name].Decoded["ec"])
		gotTexts := decodePlistTexts(t, filepath.Join(dir, name))
		if !reflect.DeepEqual(gotTexts, wantTexts) {
			t.Errorf("%s: texts %q, want %q", name, gotTexts, wantTexts)
		}
		n += len(gotTexts)
	}
	if n == 0 {
		t.Fatal("no nested typedstream bodies found")
	}
	t.Logf("%d nested bodies decoded", n)
}

// collectTexts gathers expected typedstream_text values from the "ec" map in
// part order, then item order.
func collectTexts(ec any) []string {
	m, _ := ec.(map[string]any)
	var out []string
	for _, part := range sortedKeys(m) {
		items, _ := m[part].([]any)
		for _, it := range items {
			t, _ := it.(map[string]any)["t"].(map[string]any)
			if s, ok := t["typedstream_text"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
