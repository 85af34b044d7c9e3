package typedstream

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// hdr is the standard header.
var hdr = string(streamHeader[:])

func mustEncode(t testing.TB, groups ...Group) []byte {
	t.Helper()
	b, err := Encode(&Archive{Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(c *Class, groups ...Group) *Object { return &Object{Class: c, Groups: groups} }

func grp(enc string, vals ...Value) Group { return Group{Encoding: enc, Values: vals} }

// attributedRaw builds an attributed string object with arbitrary run groups.
func attributedRaw(text string, runGroups ...Group) []byte {
	gs := append([]Group{grp("@", obj(clsNSString, grp("+", Bytes(text))))}, runGroups...)
	b, err := Encode(&Archive{Groups: []Group{grp("@", obj(clsNSMutableAttributedString, gs...))}})
	if err != nil {
		panic(err)
	}
	return b
}

func partDict(p int64) *Object {
	return obj(clsNSDictionary, grp("i", Int(1)),
		grp("@", obj(clsNSString, grp("+", Bytes(KeyPart)))),
		grp("@", obj(clsNSNumber, grp("*", CString("i")), grp("i", Int(p)))))
}

func nested(n int) []byte {
	w := newWriter()
	w.shared("@")
	for i := 0; i < n; i++ {
		if err := w.begin(clsNSArray, nil); err != nil {
			panic(err)
		}
		if err := w.group("i", Int(1)); err != nil {
			panic(err)
		}
		w.shared("@")
	}
	w.byte1(tagNil)
	for i := 0; i < n; i++ {
		w.end()
	}
	return w.buf
}

// TestMalformedBlobsAreErrorsNeverResults: every malformed, hostile or
// unsupported blob (bad headers, references out of range, cycles, huge
// lengths, work amplification, deep nesting, inconsistent runs) makes
// AttributedBody return an error and no text or runs — ErrUnsupported for a
// format it does not read, a *SyntaxError otherwise — and Decode refuses it
// too unless it is a valid stream that is just not an attributedBody.
func TestMalformedBlobsAreErrorsNeverResults(t *testing.T) {
	valid, err := EncodeAttributedBody("hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	cyclic := obj(clsNSArray, grp("i", Int(1)))
	cyclic.Groups = append(cyclic.Groups, grp("@", cyclic))
	manyBangs := hdr + "\x84" + "\x81\xe8\x03" + strings.Repeat("!", 1000) + strings.Repeat("\x92", 60000)
	tests := []struct {
		name        string
		blob        []byte
		unsupported bool
		decodeOK    bool // Decode may accept it (a valid stream that is not an attributedBody)
	}{
		{name: "empty", blob: nil},
		{name: "one byte", blob: []byte{4}},
		{name: "header only", blob: []byte(hdr)},
		{name: "version 5", blob: []byte("\x05" + hdr[1:] + "\x92")},
		{name: "version 3", blob: []byte("\x03" + hdr[1:]), unsupported: true},
		{name: "big endian", blob: []byte("\x04\x0btypedstream\x81\xe8\x03"), unsupported: true},
		{name: "bad signature", blob: []byte("\x04\x0bstreamtypex\x81\xe8\x03\x84\x01@\x85")},
		{name: "signature length past end", blob: []byte("\x04\x7fstreamtyped")},
		{name: "system version 999", blob: []byte("\x04\x0bstreamtyped\x81\xe7\x03"), unsupported: true},
		{name: "system version tag", blob: []byte("\x04\x0bstreamtyped\x84")},
		{name: "trailing zero", blob: append(append([]byte{}, valid...), 0)},
		{name: "trailing end tag", blob: append(append([]byte{}, valid...), tagEnd)},
		{name: "trailing nil group", blob: append(append([]byte{}, valid...), tagNil)},
		{name: "trailing second value", blob: append(append([]byte{}, valid...), 0x92, tagNil), decodeOK: true},
		{name: "string ref out of range", blob: []byte(hdr + "\x99")},
		{name: "multi-byte string ref out of range", blob: []byte(hdr + "\x81\x00\x10")},
		{name: "object ref out of range", blob: []byte(hdr + "\x84\x01@\xa0")},
		{name: "object ref to a class", blob: []byte(hdr + "\x84\x01@\x84\x84\x84\x06NSNull\x00\x85\x86\x92\x93")},
		{name: "class ref to an object", blob: []byte(hdr + "\x84\x01@\x84\x84\x84\x06NSNull\x00\x85\x86\x92\x84\x92\x86")},
		{name: "class chain refers to itself", blob: []byte(hdr + "\x84\x01@\x84\x84\x84\x01A\x00\x84\x84\x01B\x00\x93\x86")},
		{name: "object without class", blob: []byte(hdr + "\x84\x01@\x84\x85\x86")},
		{name: "cyclic object", blob: mustEncode(t, grp("@", cyclic))},
		{name: "huge + length 0x82", blob: []byte(hdr + "\x84\x01+\x82\xff\xff\xff\x7fabc")},
		{name: "huge + length 0x87", blob: []byte(hdr + "\x84\x01+\x87\xff\xff\xff\xff\xff\xff\xff\xffabc")},
		{name: "huge string-table length", blob: []byte(hdr + "\x84\x82\x00\x00\x00\x40@")},
		{name: "huge char array", blob: []byte(hdr + "\x84\x0d[9999999999c]")},
		{name: "char array past end", blob: []byte(hdr + "\x84\x09[100000c]abc")},
		{name: "array length overflow", blob: []byte(hdr + "\x84\x19[99999999999999999999999c]")},
		{name: "array of nothing", blob: []byte(hdr + "\x84\x0a[1000000!]")},
		{name: "work amplification", blob: []byte(manyBangs)},
		{name: "deep objects", blob: nested(maxDepth + 10)},
		{name: "deep struct type", blob: []byte(hdr + "\x84\x81\x91\x01" + strings.Repeat("{a=", 100) + "i" + strings.Repeat("}", 100) + "\x01")},
		{name: "unterminated struct", blob: []byte(hdr + "\x84\x04{a=i\x01")},
		{name: "unterminated array", blob: []byte(hdr + "\x84\x03[2i\x01\x01")},
		{name: "unknown type", blob: []byte(hdr + "\x84\x01?\x00")},
		{name: "empty encoding", blob: []byte(hdr + "\x84\x00")},
		{name: "bool 2", blob: []byte(hdr + "\x84\x01B\x02")},
		{name: "int overflow i", blob: []byte(hdr + "\x84\x01i\x87\x00\x00\x00\x00\x01\x00\x00\x00")},
		{name: "int overflow s", blob: []byte(hdr + "\x84\x01s\x82\x00\x00\x01\x00")},
		{name: "tag where int", blob: []byte(hdr + "\x84\x01i\x84")},
		{name: "C string with NUL", blob: []byte(hdr + "\x84\x01*\x84\x84\x02a\x00")},
		{name: "nil C string literal", blob: []byte(hdr + "\x84\x01*\x84\x85")},
		{name: "invalid UTF-8 NSString", blob: mustEncode(t, grp("@", obj(clsNSString, grp("+", Bytes("a\xffb")))))},
		{name: "NSString nil bytes", blob: mustEncode(t, grp("@", obj(clsNSString, grp("+", nil))))},
		{name: "NSString two groups", blob: mustEncode(t, grp("@", obj(clsNSString, grp("+", Bytes("a")), grp("+", Bytes("b")))))},
		{name: "NSDictionary short", blob: mustEncode(t, grp("@", obj(clsNSDictionary, grp("i", Int(2)), grp("@", String("k")), grp("@", String("v")))))},
		{name: "NSDictionary negative count", blob: mustEncode(t, grp("@", obj(clsNSDictionary, grp("i", Int(-1)))))},
		{name: "NSArray long", blob: mustEncode(t, grp("@", obj(clsNSArray, grp("i", Int(0)), grp("@", String("x")))))},
		{name: "NSNumber type mismatch", blob: mustEncode(t, grp("@", obj(clsNSNumber, grp("*", CString("q")), grp("i", Int(1)))))},
		{name: "NSNumber non-scalar", blob: mustEncode(t, grp("@", obj(clsNSNumber, grp("*", CString("@")), grp("@", nil))))},
		{name: "NSData length mismatch", blob: mustEncode(t, grp("@", obj(clsNSData, grp("i", Int(3)), grp("[2c]", Bytes("ab")))))},
		{name: "NSURL bad flag", blob: mustEncode(t, grp("@", obj(clsNSURL, grp("c", Int(2)), grp("@", String("x")))))},
		{name: "NSURL relative without base", blob: mustEncode(t, grp("@", obj(clsNSURL, grp("c", Int(1)), grp("@", String("x")))))},
		{name: "NSNull with body", blob: mustEncode(t, grp("@", obj(clsNSNull, grp("i", Int(1)))))},
		{name: "runs short of text", blob: attributedRaw("abc", grp("iI", Int(1), Uint(2)), grp("@", partDict(0)))},
		{name: "runs past text", blob: attributedRaw("abc", grp("iI", Int(1), Uint(2)), grp("@", partDict(0)), grp("iI", Int(1), Uint(2)))},
		{name: "huge run length", blob: attributedRaw("abc", grp("iI", Int(1), Uint(1<<32-1)), grp("@", partDict(0)))},
		{name: "run number out of sequence", blob: attributedRaw("abc", grp("iI", Int(2), Uint(3)), grp("@", partDict(0)))},
		{name: "run number zero", blob: attributedRaw("abc", grp("iI", Int(0), Uint(3)))},
		{name: "new run number without dictionary", blob: attributedRaw("abc", grp("iI", Int(1), Uint(3)))},
		{name: "run splits surrogate pair", blob: attributedRaw("𝖍", grp("iI", Int(1), Uint(1)), grp("@", partDict(0)), grp("iI", Int(1), Uint(1)))},
		{name: "run attributes not a dictionary", blob: attributedRaw("a", grp("iI", Int(1), Uint(1)), grp("@", String("x")))},
		{name: "attribute key not a string", blob: attributedRaw("a", grp("iI", Int(1), Uint(1)), grp("@", obj(clsNSDictionary, grp("i", Int(1)), grp("@", Number{Type: 'i', Int: 1}), grp("@", String("x")))))},
		{name: "attributed string without string", blob: mustEncode(t, grp("@", obj(clsNSAttributedString, grp("@", Number{Type: 'i'}))))},
		{name: "root is a plain string", blob: mustEncode(t, grp("@", String("hi"))), decodeOK: true},
		{name: "root is nil", blob: []byte(hdr + "\x84\x01@\x85"), decodeOK: true},
		{name: "root is unknown class", blob: mustEncode(t, grp("@", obj(&Class{Name: "IMFoo"}, grp("i", Int(1))))), decodeOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, runs, err := AttributedBody(tc.blob)
			if err == nil || text != "" || runs != nil {
				t.Fatalf("AttributedBody = %q, %d runs, %v; want an error and no result", text, len(runs), err)
			}
			var se *SyntaxError
			if tc.unsupported != errors.Is(err, ErrUnsupported) || (!tc.unsupported && !errors.As(err, &se)) {
				t.Errorf("error %v (%T): unsupported=%v", err, err, errors.Is(err, ErrUnsupported))
			}
			t.Logf("AttributedBody: %v", err)
			a, derr := Decode(tc.blob)
			if tc.decodeOK {
				if derr != nil {
					t.Errorf("Decode: %v", derr)
				}
			} else if derr == nil || a != nil {
				t.Errorf("Decode accepted it: %#v", a)
			}
		})
	}
}

func TestNestingLimit(t *testing.T) {
	if _, err := Decode(nested(maxDepth - 1)); err != nil {
		t.Errorf("depth %d: %v", maxDepth-1, err)
	}
	if _, err := Decode(nested(maxDepth + 1)); err == nil {
		t.Errorf("depth %d accepted", maxDepth+1)
	}
}

// TestTruncatedBlobsAreErrorsAtEveryByte: every blob cut at any byte offset
// is an error from AttributedBody and Decode, never a panic or a partial
// result.
func TestTruncatedBlobsAreErrorsAtEveryByte(t *testing.T) {
	blobs := map[string][]byte{}
	for _, s := range seedBodies() {
		blobs[s.name] = s.blob
	}
	for _, s := range seedValues() {
		blobs["value "+s.name] = s.blob
	}
	if dir := fixtureDirNoSkip("typedstream/attributed"); dir != "" {
		for name, b := range fixtureFiles(t, dir) {
			blobs["fixture "+name] = b
		}
	}
	for name, b := range blobs {
		for n := 0; n < len(b); n++ {
			if text, runs, err := AttributedBody(b[:n]); err == nil || text != "" || runs != nil {
				t.Fatalf("%s cut at %d/%d: AttributedBody = %q, %v, %v", name, n, len(b), text, runs, err)
			}
			if a, err := Decode(b[:n]); err == nil || a != nil {
				t.Fatalf("%s cut at %d/%d: Decode accepted it", name, n, len(b))
			}
		}
	}
}

// TestUnknownClasses checks that unknown classes decode generically, at the
// root (Decode) and as attribute values (AttributedBody).
func TestUnknownClasses(t *testing.T) {
	foo := &Class{Name: "IMFoo", Version: 3, Super: clsNSObject}
	blob := mustEncode(t, grp("@", obj(foo, grp("i", Int(5)), grp("@", String("s")), grp("{_r=qq}", &Struct{Name: "_r", Fields: []Value{Int(1), Int(2)}}))))
	a, err := Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := a.Root().(*Object)
	if !ok || o.Class.Name != "IMFoo" || o.Class.Version != 3 || len(o.Groups) != 3 || o.Decoded != nil {
		t.Fatalf("root = %#v", a.Root())
	}
	if s := o.Groups[1].Values[0].(*Object).Interpret(); s != String("s") {
		t.Errorf("child = %#v", s)
	}
	dict := obj(clsNSDictionary, grp("i", Int(1)), grp("@", String("custom")), grp("@", obj(foo, grp("i", Int(7)))))
	body := attributedRaw("ab", grp("iI", Int(1), Uint(2)), grp("@", dict))
	_, runs, err := AttributedBody(body)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := runs[0].Attrs["custom"].(*Object)
	if !ok || got.Class.Name != "IMFoo" || got.Groups[0].Values[0] != Int(7) || runs[0].Part != -1 {
		t.Errorf("attribute = %#v, run %+v", runs[0].Attrs["custom"], runs[0])
	}
}

// TestSharedReferences checks that a referenced object decodes to the same
// value wherever it appears (NSNumber 0 shared by two dictionaries).
func TestSharedReferences(t *testing.T) {
	blob, err := EncodeAttributedBody("ab", []Run{{Start: 0, End: 1, Part: 0, Styles: []string{"bold"}}, {Start: 1, End: 2, Part: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(blob, []byte("NSNumber")); n != 1 {
		t.Errorf("NSNumber class written %d times", n)
	}
	_, runs, err := AttributedBody(blob)
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Attrs[KeyPart] != runs[1].Attrs[KeyPart] || runs[1].Part != 0 {
		t.Errorf("shared part numbers differ: %v %v", runs[0].Attrs[KeyPart], runs[1].Attrs[KeyPart])
	}
}

// TestAllEncodings writes an object using every type encoding and reads it
// back unchanged.
func TestAllEncodings(t *testing.T) {
	cls := &Class{Name: "Everything", Super: clsNSObject}
	groups := []Group{
		grp("cCB", Int(-5), Uint(200), Bool(true)),
		grp("sSiIlLqQ", Int(-30000), Uint(65535), Int(-2000000000), Uint(4000000000), Int(7), Uint(8), Int(-9000000000000), Uint(18000000000000000000)),
		grp("fd", Float(3.5), Float(-0.1)),
		grp("fd", Float(1139), Float(-21692800)),
		grp("*+%:", CString("q"), Bytes("raw\x00bytes"), Atom("atom"), Selector("doIt:")),
		grp("*+%:", nil, nil, nil, nil),
		grp("#", clsNSString),
		grp("!i", Ignored{}, Int(1)),
		grp("[3i]", CArray{Int(1), Int(2), Int(300)}),
		grp("[4c]", Bytes{0, 1, 0xfe, 0xff}),
		grp("{_NSRange=QQ}", &Struct{Name: "_NSRange", Fields: []Value{Uint(3), Uint(4)}}),
		grp("{outer={inner=ci}[2{p=ss}]}", &Struct{Name: "outer", Fields: []Value{
			&Struct{Name: "inner", Fields: []Value{Int(1), Int(2)}},
			CArray{&Struct{Name: "p", Fields: []Value{Int(1), Int(2)}}, &Struct{Name: "p", Fields: []Value{Int(3), Int(4)}}},
		}}),
		grp("@@", nil, String("x")),
	}
	blob := mustEncode(t, grp("@", obj(cls, groups...)))
	a, err := Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	got := a.Groups[0].Values[0].(*Object)
	if len(got.Groups) != len(groups) {
		t.Fatalf("%d groups", len(got.Groups))
	}
	for i, g := range groups {
		gg := got.Groups[i]
		for j := range g.Values {
			want := g.Values[j]
			have := gg.Values[j]
			if o, ok := have.(*Object); ok {
				have = o.Interpret()
			}
			if c, ok := have.(*Class); ok {
				have = Atom(strings.Join(c.Chain(), ","))
				want = Atom("NSString,NSObject")
			}
			if !equalValue(have, want) {
				t.Errorf("group %q value %d = %#v, want %#v", g.Encoding, j, have, want)
			}
		}
	}
	again, err := Encode(a)
	if err != nil || !bytes.Equal(again, blob) {
		t.Errorf("re-encode differs (%v)", err)
	}
}

func equalValue(a, b Value) bool {
	switch x := a.(type) {
	case *Struct:
		y, ok := b.(*Struct)
		if !ok || x.Name != y.Name || len(x.Fields) != len(y.Fields) {
			return false
		}
		for i := range x.Fields {
			if !equalValue(x.Fields[i], y.Fields[i]) {
				return false
			}
		}
		return true
	case CArray:
		y, ok := b.(CArray)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case Bytes:
		y, ok := b.(Bytes)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

// TestSharedTextAmplification: many attributed strings referencing one large
// NSString must hit the work budget instead of costing quadratic time.
func TestSharedTextAmplification(t *testing.T) {
	text := String(strings.Repeat("x", 200000))
	s := &Object{Class: clsNSString, Decoded: text}
	run := grp("iI", Int(1), Uint(uint64(len(text))))
	dict := grp("@", partDict(0))
	items := make(Array, 20000)
	for i := range items {
		items[i] = &Object{Class: clsNSAttributedString, Groups: []Group{grp("@", s), run, dict}}
	}
	blob, err := EncodeValue(items)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(blob); err == nil || !strings.Contains(err.Error(), "work") {
		t.Fatalf("Decode of %d bytes: %v, want the work budget error", len(blob), err)
	}
}
