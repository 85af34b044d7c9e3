package typedstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// The encoder writes what NSArchiver writes: the same header, integer and
// float forms, shared strings and object-table references. It exists for
// test fixtures and synthetic demo data; Tidings never writes to Apple's data.

// classVersions are the class versions Foundation archives with (observed in
// every fixture: the string classes are version 1, all others 0).
var classVersions = map[string]int64{"NSString": 1, "NSMutableString": 1}

func class(name string, super *Class) *Class {
	return &Class{Name: name, Version: classVersions[name], Super: super}
}

// The canonical classes are singletons that share their superclasses, so the
// writer (which deduplicates classes by identity) writes each once.
var (
	clsNSObject                  = class("NSObject", nil)
	clsNSString                  = class("NSString", clsNSObject)
	clsNSMutableString           = class("NSMutableString", clsNSString)
	clsNSAttributedString        = class("NSAttributedString", clsNSObject)
	clsNSMutableAttributedString = class("NSMutableAttributedString", clsNSAttributedString)
	clsNSDictionary              = class("NSDictionary", clsNSObject)
	clsNSArray                   = class("NSArray", clsNSObject)
	clsNSSet                     = class("NSSet", clsNSObject)
	clsNSValue                   = class("NSValue", clsNSObject)
	clsNSNumber                  = class("NSNumber", clsNSValue)
	clsNSData                    = class("NSData", clsNSObject)
	clsNSDate                    = class("NSDate", clsNSObject)
	clsNSURL                     = class("NSURL", clsNSObject)
	clsNSNull                    = class("NSNull", clsNSObject)
)

type writer struct {
	buf     []byte
	strs    map[string]int
	nslots  int
	classes map[*Class]int // by identity: one slot per decoded or canonical class
	cstrs   map[string]int
	objs    map[any]int // object identity: pointers, or cache keys
	// dedupNumbers shares one NSNumber object per distinct value, as Messages
	// does (small NSNumbers are cached singletons).
	dedupNumbers bool
	// messages enables the attributedBody-specific object sharing.
	keys    map[string]int
	dictNum int
}

func newWriter() *writer {
	w := &writer{
		strs:    map[string]int{},
		classes: map[*Class]int{},
		cstrs:   map[string]int{},
		objs:    map[any]int{},
		keys:    map[string]int{},
	}
	w.buf = append(w.buf, streamHeader[:]...)
	return w
}

func (w *writer) byte1(b byte) { w.buf = append(w.buf, b) }

func (w *writer) signed(v int64) {
	switch {
	case v >= -110 && v <= 127:
		w.buf = append(w.buf, byte(int8(v)))
	case v == int64(int16(v)):
		w.buf = binary.LittleEndian.AppendUint16(append(w.buf, tagInt16), uint16(v))
	case v == int64(int32(v)):
		w.buf = binary.LittleEndian.AppendUint32(append(w.buf, tagInt32), uint32(v))
	default:
		w.buf = binary.LittleEndian.AppendUint64(append(w.buf, tagInt64), uint64(v))
	}
}

func (w *writer) unsigned(v uint64) {
	switch {
	case v <= 127:
		w.buf = append(w.buf, byte(v))
	case v <= math.MaxInt16:
		w.buf = binary.LittleEndian.AppendUint16(append(w.buf, tagInt16), uint16(v))
	case v <= math.MaxUint32:
		w.buf = binary.LittleEndian.AppendUint32(append(w.buf, tagInt32), uint32(v))
	default:
		w.buf = binary.LittleEndian.AppendUint64(append(w.buf, tagInt64), v)
	}
}

func (w *writer) float(v float64, double bool) {
	if v == math.Trunc(v) && !(v == 0 && math.Signbit(v)) && math.Abs(v) < 1<<62 {
		w.signed(int64(v))
		return
	}
	if double {
		w.buf = binary.LittleEndian.AppendUint64(append(w.buf, tagFloat), math.Float64bits(v))
	} else {
		w.buf = binary.LittleEndian.AppendUint32(append(w.buf, tagFloat), math.Float32bits(float32(v)))
	}
}

func (w *writer) ref(i int) { w.signed(int64(i) + refBase) }

func (w *writer) unshared(s string) {
	w.unsigned(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

func (w *writer) shared(s string) {
	if i, ok := w.strs[s]; ok {
		w.ref(i)
		return
	}
	w.byte1(tagNew)
	w.unshared(s)
	w.strs[s] = len(w.strs)
}

func (w *writer) class(c *Class) error {
	for n := 0; c != nil; c, n = c.Super, n+1 {
		if n >= maxClassChain {
			return errors.New("class chain too long")
		}
		if c.Name == "" {
			return errors.New("class without a name")
		}
		if i, ok := w.classes[c]; ok {
			w.ref(i)
			return nil
		}
		w.byte1(tagNew)
		w.shared(c.Name)
		w.signed(c.Version)
		w.classes[c] = w.nslots
		w.nslots++
	}
	w.byte1(tagNil)
	return nil
}

func (w *writer) cstring(s string) error {
	if i, ok := w.cstrs[s]; ok {
		w.ref(i)
		return nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return errors.New("a C string contains NUL")
		}
	}
	w.byte1(tagNew)
	w.shared(s)
	w.cstrs[s] = w.nslots
	w.nslots++
	return nil
}

// begin starts a new object of class c; identity, when not nil, records the
// object so later writes of the same identity become references.
func (w *writer) begin(c *Class, identity any) error {
	w.byte1(tagNew)
	if identity != nil {
		w.objs[identity] = w.nslots
	}
	w.nslots++
	return w.class(c)
}

func (w *writer) end() { w.byte1(tagEnd) }

// group writes one group: the encoding, then each value by its type.
func (w *writer) group(enc string, vals ...Value) error {
	if enc == "" {
		return errors.New("empty group encoding")
	}
	w.shared(enc)
	i, k := 0, 0
	for i < len(enc) {
		if k >= len(vals) {
			return fmt.Errorf("encoding %q has more types than values", enc)
		}
		next, err := w.value(enc, i, vals[k], 0)
		if err != nil {
			return fmt.Errorf("encoding %q: %w", enc, err)
		}
		i, k = next, k+1
	}
	if k != len(vals) {
		return fmt.Errorf("encoding %q has fewer types than values", enc)
	}
	return nil
}

func typeErr(c byte, v Value) error { return fmt.Errorf("cannot write %T as type %c", v, c) }

// value writes v as the type starting at enc[i] and returns the index after it.
func (w *writer) value(enc string, i int, v Value, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("nesting too deep")
	}
	c := enc[i]
	switch c {
	case 'c', 'C', 'B':
		switch x := v.(type) {
		case Int:
			w.byte1(byte(x))
		case Uint:
			w.byte1(byte(x))
		case Bool:
			if x {
				w.byte1(1)
			} else {
				w.byte1(0)
			}
		default:
			return 0, typeErr(c, v)
		}
	case 's', 'i', 'l', 'q', 'S', 'I', 'L', 'Q':
		switch x := v.(type) {
		case Int:
			w.signed(int64(x))
		case Uint:
			w.unsigned(uint64(x))
		default:
			return 0, typeErr(c, v)
		}
	case 'f', 'd':
		x, ok := v.(Float)
		if !ok {
			return 0, typeErr(c, v)
		}
		w.float(float64(x), c == 'd')
	case '+':
		switch x := v.(type) {
		case nil:
			w.byte1(tagNil)
		case Bytes:
			w.unshared(string(x))
		case String:
			w.unshared(string(x))
		default:
			return 0, typeErr(c, v)
		}
	case '*':
		switch x := v.(type) {
		case nil:
			w.byte1(tagNil)
		case CString:
			if err := w.cstring(string(x)); err != nil {
				return 0, err
			}
		default:
			return 0, typeErr(c, v)
		}
	case '%', ':':
		switch x := v.(type) {
		case nil:
			w.byte1(tagNil)
		case Atom:
			w.shared(string(x))
		case Selector:
			w.shared(string(x))
		default:
			return 0, typeErr(c, v)
		}
	case '#':
		switch x := v.(type) {
		case nil:
			w.byte1(tagNil)
		case *Class:
			if err := w.class(x); err != nil {
				return 0, err
			}
		default:
			return 0, typeErr(c, v)
		}
	case '@':
		if err := w.object(v, depth+1); err != nil {
			return 0, err
		}
	case '!':
	case '[':
		j := i + 1
		n := 0
		for j < len(enc) && enc[j] >= '0' && enc[j] <= '9' {
			n = n*10 + int(enc[j]-'0')
			j++
		}
		end, err := typeEnd([]byte(enc), j)
		if err != nil || end >= len(enc) || enc[end] != ']' {
			return 0, fmt.Errorf("malformed array type %q", enc)
		}
		if end == j+1 && (enc[j] == 'c' || enc[j] == 'C') {
			b, ok := v.(Bytes)
			if !ok || len(b) != n {
				return 0, fmt.Errorf("char array [%d%c] needs %d Bytes", n, enc[j], n)
			}
			w.buf = append(w.buf, b...)
			return end + 1, nil
		}
		arr, ok := v.(CArray)
		if !ok || len(arr) != n {
			return 0, fmt.Errorf("array type %q needs a CArray of %d", enc[i:end+1], n)
		}
		for _, e := range arr {
			if _, err := w.value(enc, j, e, depth+1); err != nil {
				return 0, err
			}
		}
		return end + 1, nil
	case '{':
		st, ok := v.(*Struct)
		if !ok {
			return 0, typeErr(c, v)
		}
		end, err := typeEnd([]byte(enc), i)
		if err != nil {
			return 0, err
		}
		j := i + 1
		for j < end && enc[j] != '=' && enc[j] != '}' {
			j++
		}
		if enc[j] == '=' {
			j++
		}
		k := 0
		for j < end-1 {
			if k >= len(st.Fields) {
				return 0, fmt.Errorf("struct %q has more types than fields", st.Name)
			}
			if j, err = w.value(enc, j, st.Fields[k], depth+1); err != nil {
				return 0, err
			}
			k++
		}
		if k != len(st.Fields) {
			return 0, fmt.Errorf("struct %q has fewer types than fields", st.Name)
		}
		return end, nil
	default:
		return 0, fmt.Errorf("unknown type %q", c)
	}
	return i + 1, nil
}

// object writes an '@' value: nil, a reference to an object written before,
// or a new object.
func (w *writer) object(v Value, depth int) error {
	if depth > maxDepth {
		return errors.New("nesting too deep")
	}
	var identity any
	switch x := v.(type) {
	case nil:
		w.byte1(tagNil)
		return nil
	case *Object:
		identity = x
	case *URL:
		identity = x
	case *AttributedString:
		identity = x
	case Number:
		if w.dedupNumbers {
			identity = x
		}
	}
	if identity != nil {
		if i, ok := w.objs[identity]; ok {
			w.ref(i)
			return nil
		}
	}
	switch x := v.(type) {
	case *Object:
		if x.Groups == nil && x.Decoded != nil {
			return w.foundation(x.Decoded, x.Class, identity, depth)
		}
		if x.Class == nil {
			return errors.New("object without a class")
		}
		if err := w.begin(x.Class, identity); err != nil {
			return err
		}
		for _, g := range x.Groups {
			if err := w.group(g.Encoding, g.Values...); err != nil {
				return err
			}
		}
		w.end()
		return nil
	}
	return w.foundation(v, nil, identity, depth)
}

// foundation writes a Foundation value as the body its class archives,
// under class cls (or the canonical class when cls is nil).
func (w *writer) foundation(v Value, cls *Class, identity any, depth int) error {
	pick := func(c *Class) *Class {
		if cls != nil {
			return cls
		}
		return c
	}
	var err error
	switch x := v.(type) {
	case String:
		if !utf8.ValidString(string(x)) {
			return errors.New("NSString text is not valid UTF-8")
		}
		if err = w.begin(pick(clsNSString), identity); err == nil {
			err = w.group("+", x)
		}
	case *AttributedString:
		if err = w.begin(pick(clsNSAttributedString), identity); err == nil {
			err = w.attributedBody(x.Text, x.Runs, nil, depth)
		}
	case Dictionary:
		if len(x.Keys) != len(x.Values) {
			return errors.New("dictionary keys and values differ in number")
		}
		if err = w.begin(pick(clsNSDictionary), identity); err != nil {
			return err
		}
		if err = w.group("i", Int(len(x.Keys))); err != nil {
			return err
		}
		for i := range x.Keys {
			if err = w.group("@", x.Keys[i]); err == nil {
				err = w.group("@", x.Values[i])
			}
			if err != nil {
				return err
			}
		}
	case Array:
		err = w.list(pick(clsNSArray), identity, "i", x)
	case Set:
		err = w.list(pick(clsNSSet), identity, "I", x)
	case Number:
		var val Value
		switch x.Type {
		case 'c', 's', 'i', 'l', 'q':
			val = Int(x.Int)
		case 'B':
			val = Bool(x.Int != 0)
		case 'C', 'S', 'I', 'L', 'Q':
			val = Uint(x.Uint)
		case 'f', 'd':
			val = Float(x.Float)
		default:
			return fmt.Errorf("NSNumber type %q", x.Type)
		}
		if err = w.begin(pick(clsNSNumber), identity); err == nil {
			if err = w.group("*", CString(string(x.Type))); err == nil {
				err = w.group(string(x.Type), val)
			}
		}
	case Boxed:
		if err = w.begin(pick(clsNSValue), identity); err == nil {
			if err = w.group("*", CString(x.Type)); err == nil {
				err = w.group(x.Type, x.Value)
			}
		}
	case Data:
		if err = w.begin(pick(clsNSData), identity); err == nil {
			if err = w.group("i", Int(len(x))); err == nil {
				err = w.group("["+strconv.Itoa(len(x))+"c]", Bytes(x))
			}
		}
	case Date:
		if err = w.begin(pick(clsNSDate), identity); err == nil {
			err = w.group("d", Float(x))
		}
	case *URL:
		if err = w.begin(pick(clsNSURL), identity); err != nil {
			return err
		}
		if x.Base != nil {
			if err = w.group("c", Int(1)); err == nil {
				err = w.group("@", x.Base)
			}
		} else {
			err = w.group("c", Int(0))
		}
		if err == nil {
			err = w.group("@", String(x.Relative))
		}
	case Null:
		err = w.begin(pick(clsNSNull), identity)
	default:
		return fmt.Errorf("cannot archive %T as an object", v)
	}
	if err != nil {
		return err
	}
	w.end()
	return nil
}

func (w *writer) list(c *Class, identity any, countEnc string, items []Value) error {
	if err := w.begin(c, identity); err != nil {
		return err
	}
	var n Value = Int(len(items))
	if countEnc == "I" {
		n = Uint(len(items))
	}
	if err := w.group(countEnc, n); err != nil {
		return err
	}
	for _, it := range items {
		if err := w.group("@", it); err != nil {
			return err
		}
	}
	return nil
}

// Encode writes an archive back to typedstream bytes. Objects that appear
// more than once (the same *Object, *URL, *AttributedString or *Class
// pointer) become references, shared strings and C strings (by value) are
// written once, so Encode(Decode(b)) reproduces b for streams
// written by NSArchiver. Like EncodeAttributedBody it is meant for fixtures
// and tests.
func Encode(a *Archive) ([]byte, error) {
	if a == nil || len(a.Groups) == 0 {
		return nil, errors.New("typedstream: nothing to encode")
	}
	w := newWriter()
	for _, g := range a.Groups {
		if err := w.group(g.Encoding, g.Values...); err != nil {
			return nil, fmt.Errorf("typedstream: encode: %w", err)
		}
	}
	return w.buf, nil
}

// EncodeValue writes a stream holding one object: v (an *Object or a
// Foundation value such as String, Dictionary or Number).
func EncodeValue(v Value) ([]byte, error) {
	return Encode(&Archive{Groups: []Group{{Encoding: "@", Values: []Value{v}}}})
}

// EncodeAttributedBody writes text and runs as an iMessage attributedBody,
// the way Messages writes it: an NSMutableAttributedString over an
// NSMutableString, one ("iI" dictionary number, UTF-16 length) group per
// run, an attribute NSDictionary for each distinct attribute set (repeated
// sets reuse their number), shared NSNumber objects, NSString values for
// GUIDs, filenames and mentions, and NSURL for links. It is for test
// fixtures and synthetic demo data only: Tidings never writes Apple's data.
//
// Runs are placed by Start/End (byte offsets into text) when any run has a
// non-zero End, else by their UTF-16 Length; either way they must tile the
// text. No runs means one run over the whole text with part 0 (an empty
// text gets no runs). Each run's attribute dictionary is built from its
// fields: Part (when >= 0) as an "i" NSNumber, AttachmentGUID, Filename,
// Mention and Transcription as NSString, Link as NSURL, OneTimeCode as
// {code, displayCode} of the run's text, Detected as empty NSData, Styles
// as NSNumber 1 (effects by their number). When Attrs is set, its entries
// are written as they are and the typed fields only add keys Attrs lacks.
func EncodeAttributedBody(text string, runs []Run) ([]byte, error) {
	if !utf8.ValidString(text) {
		return nil, errors.New("typedstream: encode: text is not valid UTF-8")
	}
	w := newWriter()
	w.dedupNumbers = true
	w.shared("@")
	if err := w.begin(clsNSMutableAttributedString, nil); err != nil {
		return nil, err
	}
	if err := w.attributedBody(text, runs, clsNSMutableString, 1); err != nil {
		return nil, fmt.Errorf("typedstream: encode: %w", err)
	}
	w.end()
	return w.buf, nil
}

// attributedBody writes the body of an attributed string (after its class).
func (w *writer) attributedBody(text string, runs []Run, strClass *Class, depth int) error {
	if strClass == nil {
		strClass = clsNSString
	}
	if err := w.group("@", &Object{Class: strClass, Decoded: String(text)}); err != nil {
		return err
	}
	lengths, starts, err := runLayout(text, runs)
	if err != nil {
		return err
	}
	if len(runs) == 0 && text != "" {
		runs = []Run{{Part: 0}}
	}
	numbers := map[string]int{}
	for i, r := range runs {
		entries, err := runEntries(r, text[starts[i]:starts[i+1]])
		if err != nil {
			return err
		}
		sig := signature(entries)
		num, seen := numbers[sig]
		if !seen {
			num = len(numbers) + 1
			numbers[sig] = num
		}
		if err := w.group("iI", Int(num), Uint(lengths[i])); err != nil {
			return err
		}
		if !seen {
			if err := w.attributeDict(entries, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// runLayout returns each run's UTF-16 length and the byte offsets where the
// runs start (plus the text length), checking that they tile the text.
func runLayout(text string, runs []Run) (lengths []int, starts []int, err error) {
	if len(runs) == 0 {
		if text == "" {
			return nil, []int{0}, nil
		}
		return []int{utf16Len(text)}, []int{0, len(text)}, nil
	}
	byBytes := false
	for _, r := range runs {
		if r.End != 0 {
			byBytes = true
		}
	}
	lengths = make([]int, len(runs))
	starts = make([]int, len(runs)+1)
	if byBytes {
		pos := 0
		for i, r := range runs {
			if r.Start != pos || r.End < r.Start || r.End > len(text) {
				return nil, nil, fmt.Errorf("run %d [%d,%d) does not continue at byte %d", i, r.Start, r.End, pos)
			}
			if r.End < len(text) && !utf8.RuneStart(text[r.End]) {
				return nil, nil, fmt.Errorf("run %d ends inside a character", i)
			}
			starts[i], lengths[i] = r.Start, utf16Len(text[r.Start:r.End])
			pos = r.End
		}
		if pos != len(text) {
			return nil, nil, fmt.Errorf("runs end at byte %d, text has %d", pos, len(text))
		}
		starts[len(runs)] = len(text)
		return lengths, starts, nil
	}
	pos, units := 0, 0
	for i, r := range runs {
		if r.Length < 0 {
			return nil, nil, fmt.Errorf("run %d has a negative length", i)
		}
		starts[i] = pos
		target := units + r.Length
		for units < target && pos < len(text) {
			c, size := utf8.DecodeRuneInString(text[pos:])
			pos += size
			units++
			if c >= 0x10000 {
				units++
			}
		}
		if units != target {
			return nil, nil, fmt.Errorf("run %d does not end on a character boundary of the text", i)
		}
		lengths[i] = r.Length
	}
	if pos != len(text) {
		return nil, nil, fmt.Errorf("run lengths cover %d of %d bytes", pos, len(text))
	}
	starts[len(runs)] = len(text)
	return lengths, starts, nil
}

func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		n++
		if c >= 0x10000 {
			n++
		}
	}
	return n
}

type entry struct {
	key string
	val Value
}

// runEntries builds a run's attribute entries in the order described on
// EncodeAttributedBody: styles, mention, attachment GUID, transcription,
// other Attrs keys (sorted), part, filename, link, one-time code, data
// detectors. A key present in Attrs takes its value from Attrs.
func runEntries(r Run, runText string) ([]entry, error) {
	synth := map[string]Value{}
	one := Number{Type: 'i', Int: 1}
	for _, s := range r.Styles {
		switch s {
		case "bold":
			synth[KeyBold] = one
		case "italic":
			synth[KeyItalic] = one
		case "underline":
			synth[KeyUnderline] = one
		case "strikethrough":
			synth[KeyStrikethrough] = one
		default:
			name, ok := cutPrefix(s, "effect:")
			if !ok {
				return nil, fmt.Errorf("unknown style %q", s)
			}
			if _, ok := r.Attrs[KeyTextEffect]; ok {
				continue // Attrs carries the stored value
			}
			id, ok := effectIDs[name]
			if !ok {
				n, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("unknown text effect %q", name)
				}
				id = n
			}
			synth[KeyTextEffect] = Number{Type: 'i', Int: id}
		}
	}
	for _, dn := range r.Detected {
		i := indexOf(detectorNames[:], dn)
		if i < 0 {
			return nil, fmt.Errorf("unknown data detector %q", dn)
		}
		synth[detectorKeys[i]] = Data{}
	}
	if r.Mention != "" {
		synth[KeyMention] = String(r.Mention)
	}
	if r.AttachmentGUID != "" {
		synth[KeyFileTransferGUID] = String(r.AttachmentGUID)
	}
	if r.Transcription != "" {
		synth[KeyTranscription] = String(r.Transcription)
	}
	if r.Part >= 0 {
		synth[KeyPart] = Number{Type: 'i', Int: int64(r.Part)}
	}
	if r.Filename != "" {
		synth[KeyFilename] = String(r.Filename)
	}
	if r.Link != "" {
		synth[KeyLink] = &URL{Relative: r.Link}
	}
	if r.OneTimeCode {
		synth[KeyOneTimeCode] = Dictionary{
			Keys:   []Value{String("code"), String("displayCode")},
			Values: []Value{String(runText), String(runText)},
		}
	}
	var out []entry
	put := func(k string) {
		if v, ok := r.Attrs[k]; ok {
			out = append(out, entry{k, v})
		} else if v, ok := synth[k]; ok {
			out = append(out, entry{k, v})
		}
	}
	for _, k := range leadingKeys {
		put(k)
	}
	var extra []string
	for k := range r.Attrs {
		if indexOf(leadingKeys[:], k) < 0 && indexOf(trailingKeys[:], k) < 0 {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, entry{k, r.Attrs[k]})
	}
	for _, k := range trailingKeys {
		put(k)
	}
	return out, nil
}

var (
	leadingKeys = [...]string{KeyBold, KeyItalic, KeyUnderline, KeyStrikethrough, KeyTextEffect,
		KeyMention, KeyFileTransferGUID, KeyTranscription}
	trailingKeys = [...]string{KeyPart, KeyFilename, KeyLink, KeyOneTimeCode,
		KeyPhoneNumber, KeyAddress, KeyMoney, KeyCalendarEvent, KeyDataDetected}
)

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

var (
	detectorNames = [...]string{"phone", "address", "money", "calendar", "data"}
	detectorKeys  = [...]string{KeyPhoneNumber, KeyAddress, KeyMoney, KeyCalendarEvent, KeyDataDetected}
)

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// signature identifies an attribute set: runs with equal signatures share
// one dictionary number.
func signature(entries []entry) string {
	b := make([]byte, 0, 64)
	for _, e := range entries {
		b = strconv.AppendQuote(b, e.key)
		b = append(b, '=')
		b = appendSig(b, e.val)
		b = append(b, ';')
	}
	return string(b)
}

func appendSig(b []byte, v Value) []byte {
	switch x := v.(type) {
	case String:
		return strconv.AppendQuote(append(b, 'S'), string(x))
	case Number:
		b = append(b, 'N', x.Type)
		b = strconv.AppendInt(b, x.Int, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, x.Uint, 10)
		b = append(b, ',')
		return strconv.AppendUint(b, math.Float64bits(x.Float), 16)
	case *URL:
		if x == nil {
			return append(b, "U<nil>"...)
		}
		b = strconv.AppendQuote(append(b, 'U'), x.Relative)
		return appendSig(append(b, '^'), x.Base)
	case Data:
		return strconv.AppendQuote(append(b, 'D'), string(x))
	}
	return fmt.Appendf(b, "%T%#v", v, v)
}

// attributeDict writes a run's attribute dictionary with Messages' object
// sharing: NSNumbers are shared by value, and key strings are written once
// and then referenced, except that the second dictionary writes its keys
// anew (observed in the Mention, MultiPart and TextStyles fixtures).
func (w *writer) attributeDict(entries []entry, depth int) error {
	w.dictNum++
	w.shared("@")
	if err := w.begin(clsNSDictionary, nil); err != nil {
		return err
	}
	if err := w.group("i", Int(len(entries))); err != nil {
		return err
	}
	for _, e := range entries {
		w.shared("@")
		if i, ok := w.keys[e.key]; ok && w.dictNum != 2 {
			w.ref(i)
		} else {
			slot := w.nslots
			if err := w.foundation(String(e.key), nil, nil, depth+1); err != nil {
				return err
			}
			if !ok {
				w.keys[e.key] = slot
			}
		}
		if err := w.group("@", e.val); err != nil {
			return err
		}
	}
	w.end()
	return nil
}
