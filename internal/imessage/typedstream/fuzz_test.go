package typedstream

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated fuzz seed corpus under testdata/fuzz")

type seed struct {
	name string
	blob []byte
}

// seedBodies are attributedBody blobs made by this package's own encoder.
func seedBodies() []seed {
	obj := "\ufffc"
	cases := []struct {
		name string
		text string
		runs []Run
	}{
		{"empty", "", nil},
		{"plain", "Noter test", nil},
		{"long", strings.Repeat("Lorem ipsum dolor sit amet, consectetur. ", 5), nil},
		{"emoji", "🅱️ bold 👍🏽", []Run{{Start: 0, End: 7, Part: 0}, {Start: 7, End: 13, Part: 0, Styles: []string{"bold"}}, {Start: 13, End: 21, Part: 0}}},
		{"multipart", obj + "see" + obj, []Run{
			{Start: 0, End: 3, Part: 0, AttachmentGUID: "at_0_F0668F79-20C2-49C9-A87F-1B007ABB0CED", Filename: "IMG_1.HEIC"},
			{Start: 3, End: 6, Part: 1},
			{Start: 6, End: 9, Part: 2, AttachmentGUID: "at_2_F0668F79-20C2-49C9-A87F-1B007ABB0CED"},
		}},
		{"mention", "Hi Dad ", []Run{{Start: 0, End: 3, Part: 0}, {Start: 3, End: 6, Part: 0, Mention: "+15558675309"}, {Start: 6, End: 7, Part: 0}}},
		{"link", "https://example.com/a?b=c", []Run{{Start: 0, End: 25, Part: 0, Link: "https://example.com/a?b=c", Detected: []string{"data"}}}},
		{"code", "123456 is your code", []Run{{Start: 0, End: 6, Part: 0, OneTimeCode: true, Detected: []string{"data"}}, {Start: 6, End: 19, Part: 0}}},
		{"detectors", "call 555 at home", []Run{{Start: 0, End: 5, Part: 0}, {Start: 5, End: 8, Part: 0, Link: "tel:555", Detected: []string{"phone", "address", "money", "calendar"}}, {Start: 8, End: 16, Part: 0}}},
		{"styles", "big shake", []Run{{Start: 0, End: 3, Part: 0, Styles: []string{"bold", "italic", "effect:big"}}, {Start: 3, End: 4, Part: 0}, {Start: 4, End: 9, Part: 0, Styles: []string{"underline", "strikethrough", "effect:shake"}}}},
		{"transcription", obj, []Run{{Start: 0, End: 3, Part: 0, AttachmentGUID: "4C339597-EBBB", Transcription: "This is a test"}}},
	}
	var out []seed
	for _, c := range cases {
		b, err := EncodeAttributedBody(c.text, c.runs)
		if err != nil {
			panic(fmt.Sprintf("seed %s: %v", c.name, err))
		}
		out = append(out, seed{c.name, b})
	}
	return out
}

// seedValues are generic typedstreams made by this package's own encoder.
func seedValues() []seed {
	cases := []struct {
		name string
		v    Value
	}{
		{"dictionary", Dictionary{Keys: []Value{String("k"), String("n")}, Values: []Value{Array{String("a"), Null{}}, Number{Type: 'q', Int: -9000000000}}}},
		{"set", Set{String("s1"), Number{Type: 'd', Float: 100.5}, Number{Type: 'f', Float: 3.5}, Number{Type: 'c', Int: 1}}},
		{"data date", Array{Data{0xde, 0xad, 0, 0x7f}, Date(700000000.523), Date(21692800)}},
		{"url", &URL{Base: &URL{Relative: "https://example.com/dir/"}, Relative: "page.html"}},
		{"boxed", Boxed{Type: "{_NSRange=QQ}", Value: &Struct{Name: "_NSRange", Fields: []Value{Uint(1), Uint(2)}}}},
		{"unknown", &Object{Class: &Class{Name: "IMThing", Version: 2, Super: clsNSObject}, Groups: []Group{
			{Encoding: "cCsSiIlLqQfdB", Values: []Value{Int(1), Uint(2), Int(-3), Uint(4), Int(5), Uint(6), Int(7), Uint(8), Int(1 << 40), Uint(1 << 63), Float(0.5), Float(2), Bool(true)}},
			{Encoding: "*+%:#!", Values: []Value{CString("v"), Bytes("x"), Atom("a"), Selector("s:"), clsNSString, Ignored{}}},
			{Encoding: "[2i][3c]{p=ss}", Values: []Value{CArray{Int(1), Int(2)}, Bytes("abc"), &Struct{Name: "p", Fields: []Value{Int(1), Int(2)}}}},
		}}},
	}
	var out []seed
	for _, c := range cases {
		b, err := EncodeValue(c.v)
		if err != nil {
			panic(fmt.Sprintf("seed %s: %v", c.name, err))
		}
		out = append(out, seed{c.name, b})
	}
	return out
}

func corpusFile(b []byte) []byte {
	return []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n")
}

// TestFuzzSeedCorpus keeps the committed seed corpus equal to what the
// encoder writes today (go test -run TestFuzzSeedCorpus -update rewrites it).
func TestFuzzSeedCorpus(t *testing.T) {
	sets := map[string][]seed{
		"FuzzAttributedBody": seedBodies(),
		"FuzzDecode":         append(seedValues(), seedBodies()[1:4]...),
	}
	for target, seeds := range sets {
		dir := filepath.Join("testdata", "fuzz", target)
		for _, s := range seeds {
			path := filepath.Join(dir, "seed-"+strings.ReplaceAll(s.name, " ", "-"))
			want := corpusFile(s.blob)
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale or missing (run with -update): %v", path, err)
			}
		}
	}
}

// fixtureDirNoSkip mirrors fixtureDir but returns "" instead of skipping.
func fixtureDirNoSkip(sub string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "fixtures", sub)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func addSharedFixtures(f *testing.F) {
	for _, sub := range []string{"typedstream/attributed", "typedstream/foundation"} {
		if dir := fixtureDirNoSkip(sub); dir != "" {
			for _, b := range fixtureFiles(f, dir) {
				f.Add(b)
			}
		}
	}
}

func FuzzAttributedBody(f *testing.F) {
	for _, s := range seedBodies() {
		f.Add(s.blob)
	}
	addSharedFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		text, runs, err := AttributedBody(b)
		if err != nil {
			if text != "" || runs != nil {
				t.Fatalf("error %v with a partial result", err)
			}
			return
		}
		checkRuns(t, text, runs)
		enc, err := EncodeAttributedBody(text, runs)
		if err != nil {
			t.Fatalf("re-encode decoded body: %v", err)
		}
		text2, runs2, err := AttributedBody(enc)
		if err != nil {
			t.Fatalf("decode re-encoded body: %v", err)
		}
		if text2 != text || len(runs2) != len(runs) {
			t.Fatalf("re-encoded body gives %q/%d runs, want %q/%d", text2, len(runs2), text, len(runs))
		}
		for i := range runs {
			if runs[i].Start != runs2[i].Start || runs[i].End != runs2[i].End || runs[i].Length != runs2[i].Length {
				t.Fatalf("run %d moved: %+v vs %+v", i, runs[i], runs2[i])
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range append(seedValues(), seedBodies()...) {
		f.Add(s.blob)
	}
	addSharedFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Decode(b)
		if err != nil {
			if a != nil {
				t.Fatal("error with a partial archive")
			}
			return
		}
		_ = a.Values()
		enc, err := Encode(a)
		if err != nil {
			t.Fatalf("re-encode decoded archive: %v", err)
		}
		a2, err := Decode(enc)
		if err != nil {
			t.Fatalf("decode re-encoded archive: %v", err)
		}
		enc2, err := Encode(a2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not a fixpoint: %v", err)
		}
	})
}
