package typedstream

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The AttributedBody fast path (fast.go) and the generic reader must agree:
// whenever the fast path accepts a blob, the generic reader accepts it too
// and builds the same text and runs; AttributedBody always returns what the
// generic reader returns, errors included.

// attributedBodyGeneric decodes blob with the generic reader only.
func attributedBodyGeneric(blob []byte) (string, []Run, error) {
	d := getDecoder(blob, false)
	defer putDecoder(d)
	return d.attributedBody()
}

// attributedBodyFast decodes blob with the fast path only.
func attributedBodyFast(blob []byte) (string, []Run, bool) {
	d := getDecoder(blob, false)
	defer putDecoder(d)
	return d.fastBody()
}

// agree checks the fast path against the generic reader on blob and reports
// whether the fast path handled it.
func agree(t testing.TB, name string, blob []byte) bool {
	t.Helper()
	gt, gr, gerr := attributedBodyGeneric(blob)
	ft, fr, ok := attributedBodyFast(blob)
	at, ar, aerr := AttributedBody(blob)
	if ok {
		if gerr != nil {
			t.Fatalf("%s: fast path accepted a blob the generic reader rejects (%v): %q %+v", name, gerr, ft, fr)
		}
		if ft != gt || !sameRuns(fr, gr) {
			t.Fatalf("%s: fast path gives %q %+v\ngeneric reader gives %q %+v", name, ft, fr, gt, gr)
		}
	} else if ft != "" || fr != nil {
		t.Fatalf("%s: fast path gave up with a partial result", name)
	}
	if at != gt || !sameRuns(ar, gr) || !sameError(aerr, gerr) {
		t.Fatalf("%s: AttributedBody = %q %+v %v\ngeneric reader = %q %+v %v", name, at, ar, aerr, gt, gr, gerr)
	}
	return ok
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	var sa, sb *SyntaxError
	if errors.As(a, &sa) != errors.As(b, &sb) || errors.Is(a, ErrUnsupported) != errors.Is(b, ErrUnsupported) {
		return false
	}
	if sa != nil && *sa != *sb {
		return false
	}
	return a.Error() == b.Error()
}

func sameRuns(a, b []Run) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !sameAttrs(x.Attrs, y.Attrs) {
			return false
		}
		x.Attrs, y.Attrs = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func sameAttrs(a, b map[string]Value) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// sameValue is reflect.DeepEqual for decoded values, except that floats
// compare by their bits (a decoded NaN equals itself).
func sameValue(a, b Value) bool {
	switch x := a.(type) {
	case Float:
		y, ok := b.(Float)
		return ok && math.Float64bits(float64(x)) == math.Float64bits(float64(y))
	case Date:
		y, ok := b.(Date)
		return ok && math.Float64bits(float64(x)) == math.Float64bits(float64(y))
	case Number:
		y, ok := b.(Number)
		return ok && x.Type == y.Type && x.Int == y.Int && x.Uint == y.Uint &&
			math.Float64bits(x.Float) == math.Float64bits(y.Float)
	case Dictionary:
		y, ok := b.(Dictionary)
		return ok && sameList(x.Keys, y.Keys) && sameList(x.Values, y.Values)
	case Array:
		y, ok := b.(Array)
		return ok && sameList(x, y)
	case Set:
		y, ok := b.(Set)
		return ok && sameList(x, y)
	case CArray:
		y, ok := b.(CArray)
		return ok && sameList(x, y)
	case Boxed:
		y, ok := b.(Boxed)
		return ok && x.Type == y.Type && sameValue(x.Value, y.Value)
	}
	return reflect.DeepEqual(a, b)
}

func sameList(a, b []Value) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestFastPathAgrees runs the differential check on every shared fixture,
// on hand-made edge cases, on generated bodies and on mutations of all of
// them, and checks that the fast path really handles the bodies it is for.
func TestFastPathAgrees(t *testing.T) {
	var corpus []seed
	if dir := fixtureDirNoSkip("typedstream/attributed"); dir != "" {
		files := fixtureFiles(t, dir)
		for _, name := range sortedKeys(files) {
			ok := agree(t, "fixture "+name, files[name])
			// Every decodable attributedBody fixture is a typical body.
			if !ok && name != "ExtraData" {
				t.Errorf("fixture %s: fast path gave up", name)
			}
			corpus = append(corpus, seed{"fixture " + name, files[name]})
		}
	} else {
		t.Log("shared fixtures absent: generated bodies only")
	}
	if dir := fixtureDirNoSkip("typedstream/foundation"); dir != "" {
		files := fixtureFiles(t, dir)
		for _, name := range sortedKeys(files) {
			agree(t, "foundation "+name, files[name])
			corpus = append(corpus, seed{"foundation " + name, files[name]})
		}
	}
	for _, c := range fastEdgeCases(t) {
		if ok := agree(t, "edge "+c.name, c.blob); ok != c.fast {
			t.Errorf("edge %s: fast path handled it: %v, want %v", c.name, ok, c.fast)
		}
		corpus = append(corpus, seed{"edge " + c.name, c.blob})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	typical, handled := 0, 0
	for i := 0; i < 800; i++ {
		text, runs, isTypical := genBody(rng)
		blob, err := EncodeAttributedBody(text, runs)
		if err != nil {
			t.Fatalf("generated body %d: %v", i, err)
		}
		name := "generated " + strconv.Itoa(i)
		ok := agree(t, name, blob)
		if isTypical {
			typical++
			if ok {
				handled++
			} else {
				t.Errorf("%s: fast path gave up on a typical body %q %+v", name, text, runs)
			}
		}
		corpus = append(corpus, seed{name, blob})
	}
	if typical < 500 {
		t.Errorf("only %d of the generated bodies are typical", typical)
	}
	mutants, decoded := 0, 0
	for _, s := range corpus {
		for j := 0; j < 8; j++ {
			m := mutate(rng, s.blob)
			if agree(t, s.name+" mutant "+strconv.Itoa(j), m) {
				decoded++
			}
			mutants++
		}
	}
	t.Logf("%d corpus blobs (%d typical generated, all on the fast path), %d mutants (%d still decoded by the fast path)",
		len(corpus), handled, mutants, decoded)
}

type fastCase struct {
	name string
	blob []byte
	fast bool // the fast path handles it
}

// fastEdgeCases are blobs at the fast path's decision points.
func fastEdgeCases(t testing.TB) []fastCase {
	str := func(s string) *Object { return obj(clsNSString, grp("+", Bytes(s))) }
	num := func(typ string, v Value) *Object { return obj(clsNSNumber, grp("*", CString(typ)), grp(typ, v)) }
	dict := func(kv ...Value) *Object {
		gs := []Group{grp("i", Int(len(kv)/2))}
		for _, v := range kv {
			gs = append(gs, grp("@", v))
		}
		return obj(clsNSDictionary, gs...)
	}
	run := func(n, length int) Group { return grp("iI", Int(n), Uint(length)) }
	text := str("abc")
	// body builds an attributed string over text with the given run groups.
	body := func(gs ...Group) []byte {
		all := append([]Group{grp("@", text)}, gs...)
		return mustEncode(t, grp("@", obj(clsNSMutableAttributedString, all...)))
	}
	deep := Value(str("x"))
	for i := 0; i < maxDepth+2; i++ {
		deep = dict(str("k"), deep)
	}
	self := dict(str("k"), nil)
	self.Groups[2] = grp("@", self)
	root := obj(clsNSMutableAttributedString, grp("@", text))
	root.Groups = append(root.Groups, run(1, 3), grp("@", dict(str(KeyPart), root)))
	cyclicRoot := mustEncode(t, grp("@", root))
	shared := dict(str(KeyPart), num("i", Int(0)))
	mention := str("m")
	valid := body(run(1, 3), grp("@", shared))
	return []fastCase{
		{"plain", valid, true},
		{"nil attributes", body(run(1, 3), grp("@", nil)), true},
		{"empty dictionary", body(run(1, 3), grp("@", dict())), true},
		{"no runs", body(), false}, // runs must cover the text
		{"dictionary number reused", body(run(1, 1), grp("@", shared), run(2, 1), grp("@", dict()), run(1, 1)), true},
		{"dictionary by reference", body(run(1, 1), grp("@", shared), run(2, 2), grp("@", shared)), false},
		{"text referenced as a key", body(run(1, 3), grp("@", dict(text, num("i", Int(1))))), true},
		{"text referenced as a link", body(run(1, 3), grp("@", dict(str(KeyLink), &Object{Class: clsNSURL, Groups: []Group{grp("c", Int(0)), grp("@", text)}}))), true},
		{"string value referenced twice", body(run(1, 1), grp("@", dict(str(KeyMention), mention)), run(2, 2), grp("@", dict(str(KeyFilename), mention))), true},
		{"number types", body(run(1, 3), grp("@", dict(
			str("c"), num("c", Int(-5)), str("C"), num("C", Uint(200)), str("s"), num("s", Int(-300)),
			str("S"), num("S", Uint(60000)), str("I"), num("I", Uint(1<<31)), str("l"), num("l", Int(-1<<31)),
			str("L"), num("L", Uint(7)), str("q"), num("q", Int(-9000000000)), str("Q"), num("Q", Uint(1<<63)),
			str("f"), num("f", Float(1.5)), str("d"), num("d", Float(math.NaN())), str("B"), num("B", Bool(true))))), true},
		{"number two types", body(run(1, 3), grp("@", dict(str("k"), obj(clsNSNumber, grp("*", CString("ii")), grp("ii", Int(1), Int(2)))))), false},
		{"number non-scalar", body(run(1, 3), grp("@", dict(str("k"), obj(clsNSNumber, grp("*", CString("@")), grp("@", nil))))), false},
		{"number type mismatch", body(run(1, 3), grp("@", dict(str("k"), obj(clsNSNumber, grp("*", CString("q")), grp("i", Int(1)))))), false},
		{"number bool", body(run(1, 3), grp("@", dict(str("k"), num("B", Bool(false))))), true},
		{"NSValue", body(run(1, 3), grp("@", dict(str("k"), obj(clsNSValue, grp("*", CString("i")), grp("i", Int(1)))))), false},
		{"relative URL", body(run(1, 3), grp("@", dict(str(KeyLink), &URL{Base: &URL{Relative: "https://a/"}, Relative: "b"}))), false},
		{"URL flag 2", body(run(1, 3), grp("@", dict(str(KeyLink), obj(clsNSURL, grp("c", Int(2)), grp("@", str("x")))))), false},
		{"URL over a number", body(run(1, 3), grp("@", dict(str(KeyLink), obj(clsNSURL, grp("c", Int(0)), grp("@", num("i", Int(1))))))), false},
		{"data", body(run(1, 3), grp("@", dict(str(KeyDataDetected), Data("\x00\x01\xff")))), true},
		{"empty data", body(run(1, 3), grp("@", dict(str(KeyDataDetected), Data{}))), true},
		{"empty data with [0c]", body(run(1, 3), grp("@", dict(str(KeyDataDetected), obj(clsNSData, grp("i", Int(0)), grp("[0c]", Bytes("")))))), true},
		{"data length with a leading zero", body(run(1, 3), grp("@", dict(str(KeyDataDetected), obj(clsNSData, grp("i", Int(2)), grp("[02c]", Bytes("ab")))))), false},
		{"data length mismatch", body(run(1, 3), grp("@", dict(str(KeyDataDetected), obj(clsNSData, grp("i", Int(3)), grp("[2c]", Bytes("ab")))))), false},
		{"data I count", body(run(1, 3), grp("@", dict(str(KeyDataDetected), obj(clsNSData, grp("I", Uint(2)), grp("[2c]", Bytes("ab")))))), true},
		{"dictionary I count", body(run(1, 3), grp("@", obj(clsNSDictionary, grp("I", Uint(1)), grp("@", str(KeyPart)), grp("@", num("i", Int(2)))))), true},
		{"dictionary negative count", body(run(1, 3), grp("@", obj(clsNSDictionary, grp("i", Int(-1))))), false},
		{"data negative count", body(run(1, 3), grp("@", dict(str(KeyDataDetected), obj(clsNSData, grp("i", Int(-1)))))), false},
		{"dictionary short", body(run(1, 3), grp("@", obj(clsNSDictionary, grp("i", Int(2)), grp("@", str(KeyPart)), grp("@", num("i", Int(2)))))), false},
		{"dictionary entry in one group", body(run(1, 3), grp("@", obj(clsNSDictionary, grp("i", Int(1)), grp("@@", str(KeyPart), num("i", Int(2)))))), false},
		{"nested dictionary", body(run(1, 3), grp("@", dict(str(KeyOneTimeCode), dict(str("code"), str("1"), num("i", Int(1)), dict())))), true},
		{"deep dictionaries", body(run(1, 3), grp("@", dict(str("k"), deep))), false},
		{"self-referencing dictionary", body(run(1, 3), grp("@", dict(str("k"), self))), false},
		{"dictionary referencing the root", cyclicRoot, false},
		{"key not a string", body(run(1, 3), grp("@", dict(num("i", Int(1)), str("x")))), false},
		{"nil key", body(run(1, 3), grp("@", dict(nil, str("x")))), false},
		{"unknown value class", body(run(1, 3), grp("@", dict(str("k"), obj(&Class{Name: "IMThing", Super: clsNSObject}, grp("i", Int(1)))))), false},
		{"array value", body(run(1, 3), grp("@", dict(str("k"), Array{str("x")}))), false},
		{"duplicate keys", body(run(1, 3), grp("@", dict(
			str(KeyTextEffect), num("i", Int(5)), str(KeyTextEffect), str("x"), str(KeyTextEffect), Data{},
			str(KeyBold), num("i", Int(1)), str(KeyBold), num("i", Int(0)), str(KeyItalic), num("d", Float(0.5)),
			str(KeyPart), num("i", Int(3)), str(KeyPart), num("i", Int(-1))))), true},
		{"unknown effect", body(run(1, 3), grp("@", dict(str(KeyTextEffect), num("q", Int(77)), str(KeyUnderline), num("i", Int(1))))), true},
		{"run number out of sequence", body(run(2, 3), grp("@", shared)), false},
		{"run number zero", body(run(0, 3)), false},
		{"new number without dictionary", body(run(1, 3)), false},
		{"run longer than twice the text", body(run(1, 7), grp("@", shared)), false},
		{"runs short of the text", body(run(1, 2), grp("@", shared)), false},
		{"runs past the text", body(run(1, 2), grp("@", shared), run(1, 2)), false},
		{"run group iII", body(grp("iII", Int(1), Uint(3), Uint(0)), grp("@", shared)), false},
		{"trailing byte", append(append([]byte{}, valid...), 0), false},
		{"trailing group", append(append([]byte{}, valid...), 0x92, tagNil), false},
		{"immutable classes", mustEncode(t, grp("@", obj(clsNSAttributedString, grp("@", str("a")), run(1, 1), grp("@", shared)))), true},
		{"unknown attributed subclass", mustEncode(t, grp("@", obj(&Class{Name: "IMAttributed", Super: clsNSAttributedString}, grp("@", str("a")), run(1, 1), grp("@", shared)))), false},
		{"string subclass", mustEncode(t, grp("@", obj(clsNSAttributedString, grp("@", obj(&Class{Name: "NSTaggedString", Super: clsNSString}, grp("+", Bytes("a")))), run(1, 1), grp("@", shared)))), false},
		{"text not UTF-8", mustEncode(t, grp("@", obj(clsNSAttributedString, grp("@", str("a\xff")), run(1, 2), grp("@", shared)))), false},
		{"root not attributed", mustEncode(t, grp("@", str("hi"))), false},
	}
}

// genBody returns a random body for EncodeAttributedBody and whether it is
// typical (only attribute values the fast path handles).
func genBody(rng *rand.Rand) (string, []Run, bool) {
	pieces := []string{"a", "hello ", "World", " ", "\n", "é", "日本", "😂", "🅱️", "\ufffc", "123456", "https://x.y/z", "İ", "ↄ", "\u0000"}
	var sb strings.Builder
	n := rng.IntN(40)
	if rng.IntN(20) == 0 {
		n = 400 + rng.IntN(400) // a long text: 0x81 lengths
	}
	for i := 0; i < n; i++ {
		sb.WriteString(pieces[rng.IntN(len(pieces))])
	}
	text := sb.String()
	if text == "" || rng.IntN(4) == 0 {
		return text, nil, true
	}
	// Cut the text at rune boundaries into runs.
	var cuts []int
	for i := range text {
		if i > 0 && rng.IntN(8) == 0 {
			cuts = append(cuts, i)
		}
	}
	cuts = append(cuts, len(text))
	typical := true
	var runs []Run
	start := 0
	for _, end := range cuts {
		r := Run{Start: start, End: end, Part: rng.IntN(4) - 1}
		start = end
		if rng.IntN(10) == 0 {
			r.Part = []int{200, 70000, 1 << 30}[rng.IntN(3)]
		}
		if rng.IntN(3) == 0 && len(runs) > 0 {
			prev := runs[len(runs)-1]
			prev.Start, prev.End = r.Start, r.End
			runs = append(runs, prev) // same attributes: the dictionary number is reused
			continue
		}
		switch rng.IntN(12) {
		case 0:
			r.AttachmentGUID = "at_" + strconv.Itoa(rng.IntN(5)) + "_F0668F79-20C2-49C9-A87F-1B007ABB0CED"
			if rng.IntN(2) == 0 {
				r.Filename = "IMG_" + strconv.Itoa(rng.IntN(9999)) + ".HEIC"
			}
		case 1:
			r.Mention = "+1555867530" + strconv.Itoa(rng.IntN(10))
		case 2:
			r.Link = []string{"https://example.com/" + strconv.Itoa(rng.IntN(100)), "tel:555", "mailto:a@b.c"}[rng.IntN(3)]
		case 3:
			r.OneTimeCode = true
		case 4:
			r.Transcription = "said " + strconv.Itoa(rng.IntN(100))
		}
		for _, dn := range detectorNames {
			if rng.IntN(8) == 0 {
				r.Detected = append(r.Detected, dn)
			}
		}
		for _, s := range []string{"bold", "italic", "underline", "strikethrough"} {
			if rng.IntN(6) == 0 {
				r.Styles = append(r.Styles, s)
			}
		}
		if rng.IntN(10) == 0 {
			r.Styles = append(r.Styles, []string{"effect:big", "effect:shake", "effect:42"}[rng.IntN(3)])
		}
		if rng.IntN(4) == 0 {
			r.Attrs = map[string]Value{}
			for k := rng.IntN(3); k >= 0; k-- {
				v, ok := genValue(rng, 2)
				typical = typical && ok
				r.Attrs[[]string{KeyInlineWidth, KeyInlineHeight, KeyWritingDirection, "custom", KeyLinkIsRichLink}[rng.IntN(5)]] = v
			}
		}
		runs = append(runs, r)
	}
	return text, runs, typical
}

// genValue returns a random attribute value and whether the fast path
// handles it.
func genValue(rng *rand.Rand, depth int) (Value, bool) {
	types := "cCsSiIlLqQfdB"
	switch k := rng.IntN(14); {
	case k < 5:
		typ := types[rng.IntN(len(types))]
		n := Number{Type: typ}
		switch typ {
		case 'c':
			n.Int = int64(int8(rng.Uint32()))
		case 'B':
			n.Int = int64(rng.IntN(2))
		case 's':
			n.Int = int64(int16(rng.Uint32()))
		case 'i', 'l':
			n.Int = int64(int32(rng.Uint32())) >> rng.IntN(32)
		case 'q':
			n.Int = int64(rng.Uint64()) >> rng.IntN(64)
		case 'C':
			n.Uint = uint64(uint8(rng.Uint32()))
		case 'S':
			n.Uint = uint64(uint16(rng.Uint32()))
		case 'I', 'L':
			n.Uint = uint64(rng.Uint32()) >> rng.IntN(32)
		case 'Q':
			n.Uint = rng.Uint64() >> rng.IntN(64)
		case 'f':
			n.Float = float64(float32(rng.NormFloat64() * 100))
		case 'd':
			n.Float = []float64{rng.NormFloat64(), 3, math.Copysign(0, -1), math.Inf(1), math.NaN()}[rng.IntN(5)]
		}
		return n, true
	case k < 7:
		return String([]string{"", "x", "right-to-left", KeyPart, "日本語"}[rng.IntN(5)]), true
	case k == 7:
		return Data(bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(300))), true
	case k == 8:
		return &URL{Relative: "https://example.org/" + strconv.Itoa(rng.IntN(10))}, true
	case k == 9:
		if depth == 0 {
			return nil, true
		}
		d := Dictionary{Keys: []Value{}, Values: []Value{}}
		ok := true
		for i := rng.IntN(3); i > 0; i-- {
			v, vok := genValue(rng, depth-1)
			d.Keys = append(d.Keys, String("k"+strconv.Itoa(i)))
			d.Values = append(d.Values, v)
			ok = ok && vok
		}
		return d, ok
	case k == 10:
		return nil, true
	case k == 11:
		return Array{String("a")}, false
	case k == 12:
		return &URL{Base: &URL{Relative: "https://example.org/"}, Relative: "x"}, false
	}
	return []Value{Date(700000000.5), Null{}, Boxed{Type: "i", Value: Int(1)}}[rng.IntN(3)], false
}

// mutate returns a copy of b with one random change.
func mutate(rng *rand.Rand, b []byte) []byte {
	m := append([]byte{}, b...)
	if len(m) == 0 {
		return []byte{byte(rng.IntN(256))}
	}
	i := rng.IntN(len(m))
	special := []byte{0x00, 0x01, 0x7f, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x91, 0x92, 0x93, 0x95, 0x98, 0xff}
	switch rng.IntN(6) {
	case 0:
		return m[:i] // truncation
	case 1:
		m[i] = byte(rng.IntN(256))
	case 2:
		m[i] = special[rng.IntN(len(special))]
	case 3:
		return append(m[:i], append([]byte{special[rng.IntN(len(special))]}, b[i:]...)...)
	case 4:
		return append(m[:i], b[i+1:]...)
	default:
		m[i]++
	}
	return m
}

// FuzzAttributedBodyFastPath runs the differential check on fuzzed input.
func FuzzAttributedBodyFastPath(f *testing.F) {
	for _, s := range seedBodies() {
		f.Add(s.blob)
	}
	for _, c := range fastEdgeCases(f) {
		f.Add(c.blob)
	}
	addSharedFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, "input", b)
	})
}

// TestFastPathSeedCorpus keeps the committed seed corpus of
// FuzzAttributedBodyFastPath (the edge cases above) equal to what the encoder
// writes today (go test -run TestFastPathSeedCorpus -update rewrites it).
func TestFastPathSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzAttributedBodyFastPath")
	for _, c := range fastEdgeCases(t) {
		path := filepath.Join(dir, "seed-"+strings.ReplaceAll(c.name, " ", "-"))
		want := corpusFile(c.blob)
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
