package typedstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Tags: the signed head bytes -128..-111 are reserved; these are the ones
// NSArchiver writes.
const (
	tagInt16 = 0x81 // a 2-byte little-endian integer follows
	tagInt32 = 0x82 // a 4-byte little-endian integer follows
	tagFloat = 0x83 // a float (4 bytes) or double (8 bytes) follows; never a length
	tagNew   = 0x84 // a literal string, class or object follows
	tagNil   = 0x85 // nil
	tagEnd   = 0x86 // end of an object's body
	tagInt64 = 0x87 // an 8-byte little-endian integer follows

	// refBase is the integer that stands for index 0 of a reference table
	// (the head byte 0x92).
	refBase = -110
)

// Limits. They are far above anything Messages writes and keep hostile input
// from costing more than a small multiple of its own size.
const (
	// MaxInput is the largest blob Decode and AttributedBody accept.
	MaxInput = 64 << 20
	// maxDepth caps nesting of objects, arrays and structs.
	maxDepth = 64
	// maxClassChain caps the length of a class's superclass chain.
	maxClassChain = 64
	// budgetPerByte and budgetBase bound the work units (values, groups,
	// encoding characters, loop iterations) one blob may cost.
	budgetPerByte = 16
	budgetBase    = 4096
)

// streamHeader is the 16-byte header every iMessage typedstream starts with:
// version 4, signature "streamtyped" (little-endian), system version 1000.
var streamHeader = [...]byte{0x04, 0x0b, 's', 't', 'r', 'e', 'a', 'm', 't', 'y', 'p', 'e', 'd', 0x81, 0xe8, 0x03}

// ErrUnsupported is wrapped by errors for well-formed streams this package
// does not read (big-endian "typedstream" signature, stream version 3, a
// system version other than 1000).
var ErrUnsupported = errors.New("typedstream: unsupported stream")

// SyntaxError describes malformed input: where the decoder stopped and why.
// Every malformed or truncated blob yields one; the decoder never returns a
// partial result with it.
type SyntaxError struct {
	Offset int    // byte offset in the blob
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("typedstream: offset %d: %s", e.Offset, e.Msg)
}

type slotKind uint8

const (
	slotObject slotKind = iota + 1
	slotClass
	slotCString
)

// slot is one entry of the object table, which holds objects, classes and C
// strings in order of first appearance. It holds no pointers, so that
// filling and recycling the table costs no GC write barriers.
type slot struct {
	kind    slotKind
	done    bool      // object: body fully read (a reference before that is a cycle)
	ck      classKind // class: known Foundation class
	lazy    lazyKind  // object: set by the fast path when its value is not built (see fast.go)
	depth   int32     // class: length of the chain from here to the root
	super   int32     // class: slot of the superclass, -1 for none
	cls     int32     // object: slot of its class
	vi      int32     // 1 + index in decoder.objs of the object value, *Class or CString; 0 before it is built
	name    strRef    // class name, C string, or a lazy NSString's text
	version int64     // class version
}

// strRef is a byte string of the blob by position (blobs are at most
// MaxInput bytes).
type strRef struct{ off, n int32 }

// rawGroup is a group read into the decoder's scratch space: its encoding and
// the range of its values in decoder.vals.
type rawGroup struct {
	enc        []byte
	start, end int
}

// span is a '+' byte string that still aliases the blob. It lives only in the
// decoder's scratch space and is converted (copied) before anything escapes.
type span []byte

func (span) isValue() {}

type decoder struct {
	b      []byte
	pos    int
	strs   []strRef // the shared-string table
	slots  []slot   // the object table
	objs   []Value  // values of slots (slot.vi)
	depth  int
	budget int
	// raw makes every object an *Object with its groups (Decode). Without
	// it, Foundation objects are built straight into their interpretation.
	raw    bool
	vals   []Value
	groups []rawGroup
	// generic is set once the generic reader has used vals and groups, which
	// putDecoder must then clear.
	generic bool
	// Scratch space of the AttributedBody fast path (fast.go): stacks of
	// the keys and values of nested dictionaries being read, and the runs
	// read.
	keys, items []Value
	recs        []runRec
}

var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

func getDecoder(b []byte, raw bool) *decoder {
	d := decoderPool.Get().(*decoder)
	d.b, d.pos, d.depth, d.raw = b, 0, 0, raw
	d.budget = budgetBase + budgetPerByte*len(b)
	return d
}

func putDecoder(d *decoder) {
	if cap(d.vals) > 4096 || cap(d.slots) > 4096 || cap(d.groups) > 4096 || cap(d.strs) > 4096 || cap(d.objs) > 4096 ||
		cap(d.keys) > 4096 || cap(d.items) > 4096 || cap(d.recs) > 4096 {
		return // let an unusually large scratch space go
	}
	d.reset()
	d.b = nil
	decoderPool.Put(d)
}

// reset empties the tables and scratch space so that nothing of the last
// blob stays reachable and the next decode starts afresh.
func (d *decoder) reset() {
	if d.generic {
		// vals and groups are popped without clearing, so clear their
		// whole capacity.
		clear(d.vals[:cap(d.vals)])
		clear(d.groups[:cap(d.groups)])
		d.vals, d.groups, d.generic = d.vals[:0], d.groups[:0], false
	}
	// The other tables only grow within one decode (the fast path's stacks
	// are cleared as they are popped), so their lengths cover everything
	// they hold. slots, strs and recs hold no pointers.
	clear(d.objs)
	clear(d.keys)
	clear(d.items)
	d.slots, d.strs, d.objs, d.keys, d.items, d.recs = d.slots[:0], d.strs[:0], d.objs[:0], d.keys[:0], d.items[:0], d.recs[:0]
	d.pos, d.depth = 0, 0
	d.budget = budgetBase + budgetPerByte*len(d.b)
}

func (d *decoder) errf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) spend(n int) error {
	d.budget -= n
	if d.budget >= 0 {
		return nil
	}
	return d.overBudget()
}

func (d *decoder) overBudget() error {
	return d.errf("stream costs more work than its size allows")
}

// head reads one byte. It and take are small enough to be inlined; their
// errors are built out of line.
func (d *decoder) head() (byte, error) {
	if d.pos < len(d.b) {
		h := d.b[d.pos]
		d.pos++
		return h, nil
	}
	return 0, d.eof()
}

func (d *decoder) eof() error { return d.errf("unexpected end of data") }

func (d *decoder) take(n uint64) ([]byte, error) {
	if n <= uint64(len(d.b)-d.pos) {
		s := d.b[d.pos : d.pos+int(n)]
		d.pos += int(n)
		return s, nil
	}
	return nil, d.short(n)
}

func (d *decoder) short(n uint64) error {
	return d.errf("length %d exceeds the %d bytes left", n, len(d.b)-d.pos)
}

// header checks the 16-byte stream header.
func (d *decoder) header() error {
	if len(d.b) > MaxInput {
		return d.errf("blob of %d bytes exceeds the %d-byte limit", len(d.b), MaxInput)
	}
	if len(d.b) < 2 {
		return d.errf("too short for a typedstream header")
	}
	if d.b[0] != 4 {
		if d.b[0] == 3 {
			return fmt.Errorf("%w: stream version 3 (NeXTSTEP)", ErrUnsupported)
		}
		return d.errf("stream version %d, want 4", d.b[0])
	}
	d.pos = 1
	n, _ := d.head()
	sig, err := d.take(uint64(n))
	if err != nil {
		return err
	}
	switch string(sig) {
	case "streamtyped":
	case "typedstream":
		return fmt.Errorf("%w: big-endian signature %q", ErrUnsupported, sig)
	default:
		return d.errf("bad signature %q", sig)
	}
	h, err := d.head()
	if err != nil {
		return err
	}
	v, err := d.signed(h)
	if err != nil {
		return err
	}
	if v != 1000 {
		return fmt.Errorf("%w: system version %d, want 1000", ErrUnsupported, v)
	}
	return nil
}

func isTag(h byte) bool { return h >= 0x80 && h <= 0x91 }

// signed reads an integer whose head byte is h (python-typedstream's rule:
// a non-tag head is the value itself).
func (d *decoder) signed(h byte) (int64, error) {
	switch {
	case !isTag(h):
		return int64(int8(h)), nil
	case h == tagInt16:
		b, err := d.take(2)
		if err != nil {
			return 0, err
		}
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case h == tagInt32:
		b, err := d.take(4)
		if err != nil {
			return 0, err
		}
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	case h == tagInt64:
		b, err := d.take(8)
		if err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint64(b)), nil
	}
	d.pos--
	return 0, d.errf("tag 0x%02x where an integer was expected", h)
}

// unsigned reads an integer in an unsigned context (zero-extended).
func (d *decoder) unsigned(h byte) (uint64, error) {
	switch {
	case !isTag(h):
		return uint64(h), nil
	case h == tagInt16:
		b, err := d.take(2)
		if err != nil {
			return 0, err
		}
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case h == tagInt32:
		b, err := d.take(4)
		if err != nil {
			return 0, err
		}
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case h == tagInt64:
		b, err := d.take(8)
		if err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint64(b), nil
	}
	d.pos--
	return 0, d.errf("tag 0x%02x where an integer was expected", h)
}

// ref reads a reference number and checks it against a table of size n.
func (d *decoder) ref(h byte, n int) (int, error) {
	if !isTag(h) { // a one-byte reference, the usual case
		if i := int(int8(h)) - refBase; i < n {
			return i, nil
		}
	}
	v, err := d.signed(h)
	if err != nil {
		return 0, err
	}
	i := v - refBase
	if i < 0 || i >= int64(n) {
		return 0, d.errf("reference %d out of range (table has %d entries)", i, n)
	}
	return int(i), nil
}

// unshared reads a length-prefixed byte string; ok is false for nil.
func (d *decoder) unshared(h byte) (s []byte, ok bool, err error) {
	if h == tagNil {
		return nil, false, nil
	}
	n, err := d.unsigned(h)
	if err != nil {
		return nil, false, err
	}
	s, err = d.take(n)
	return s, err == nil, err
}

// shared reads a string through the shared-string table; ok is false for nil.
func (d *decoder) shared(h byte) (s []byte, ok bool, err error) {
	r, ok, err := d.sharedRef(h)
	return d.str(r), ok, err
}

// str returns the bytes of r.
func (d *decoder) str(r strRef) []byte { return d.b[r.off : r.off+r.n] }

// sharedRef is shared, returning the string by position.
func (d *decoder) sharedRef(h byte) (strRef, bool, error) {
	switch h {
	case tagNil:
		return strRef{}, false, nil
	case tagNew:
		h2, err := d.head()
		if err != nil {
			return strRef{}, false, err
		}
		s, ok, err := d.unshared(h2)
		if err != nil {
			return strRef{}, false, err
		}
		if !ok {
			return strRef{}, false, d.errf("nil literal in the shared-string table")
		}
		// s is the last len(s) bytes read.
		r := strRef{off: int32(d.pos - len(s)), n: int32(len(s))}
		d.strs = append(d.strs, r)
		return r, true, nil
	}
	i, err := d.ref(h, len(d.strs))
	if err != nil {
		return strRef{}, false, err
	}
	return d.strs[i], true, nil
}

// val returns the value of slot k (nil before it is built).
func (d *decoder) val(k int) Value {
	if vi := d.slots[k].vi; vi > 0 {
		return d.objs[vi-1]
	}
	return nil
}

// setVal records v as the value of slot k.
func (d *decoder) setVal(k int, v Value) {
	d.objs = append(d.objs, v)
	d.slots[k].vi = int32(len(d.objs))
}

// decode reads the whole stream into d.groups/d.vals (top-level groups).
func (d *decoder) decode() error {
	d.generic = true
	if err := d.header(); err != nil {
		return err
	}
	for d.pos < len(d.b) {
		h, _ := d.head()
		if err := d.group(h); err != nil {
			return err
		}
	}
	if len(d.groups) == 0 {
		return d.errf("no values after the header")
	}
	return nil
}

// group reads one typed-value group whose encoding head is h.
func (d *decoder) group(h byte) error {
	at := d.pos - 1
	enc, ok, err := d.shared(h)
	if err != nil {
		return err
	}
	if !ok || len(enc) == 0 {
		return &SyntaxError{Offset: at, Msg: "group with an empty encoding"}
	}
	if err := d.spend(len(enc)); err != nil {
		return err
	}
	start := len(d.vals)
	for i := 0; i < len(enc); {
		if i, err = d.value(enc, i); err != nil {
			return err
		}
	}
	d.groups = append(d.groups, rawGroup{enc: enc, start: start, end: len(d.vals)})
	return nil
}

// value reads one value of the type that starts at enc[i], appends it to
// d.vals and returns the index after the type.
func (d *decoder) value(enc []byte, i int) (int, error) {
	if err := d.spend(1); err != nil {
		return 0, err
	}
	c := enc[i]
	switch c {
	case 'c', 'C', 'B', 's', 'i', 'l', 'q', 'S', 'I', 'L', 'Q', 'f', 'd':
		n, err := d.scalar(c)
		if err != nil {
			return 0, err
		}
		switch c {
		case 'C', 'S', 'I', 'L', 'Q':
			d.vals = append(d.vals, Uint(n.Uint))
		case 'f', 'd':
			d.vals = append(d.vals, Float(n.Float))
		case 'B':
			d.vals = append(d.vals, Bool(n.Int == 1))
		default:
			d.vals = append(d.vals, Int(n.Int))
		}
		return i + 1, nil
	case '+':
		h, err := d.head()
		if err != nil {
			return 0, err
		}
		s, ok, err := d.unshared(h)
		if err != nil {
			return 0, err
		}
		if ok {
			d.vals = append(d.vals, span(s))
		} else {
			d.vals = append(d.vals, nil)
		}
		return i + 1, nil
	case '%', ':':
		h, err := d.head()
		if err != nil {
			return 0, err
		}
		s, ok, err := d.shared(h)
		if err != nil {
			return 0, err
		}
		switch {
		case !ok:
			d.vals = append(d.vals, nil)
		case c == '%':
			d.vals = append(d.vals, Atom(s))
		default:
			d.vals = append(d.vals, Selector(s))
		}
		return i + 1, nil
	case '*':
		v, err := d.cstring()
		if err != nil {
			return 0, err
		}
		d.vals = append(d.vals, v)
		return i + 1, nil
	case '#':
		h, err := d.head()
		if err != nil {
			return 0, err
		}
		k, err := d.class(h)
		if err != nil {
			return 0, err
		}
		if k < 0 {
			d.vals = append(d.vals, nil)
		} else {
			d.vals = append(d.vals, d.classValue(k))
		}
		return i + 1, nil
	case '@':
		h, err := d.head()
		if err != nil {
			return 0, err
		}
		v, err := d.object(h)
		if err != nil {
			return 0, err
		}
		d.vals = append(d.vals, v)
		return i + 1, nil
	case '!':
		d.vals = append(d.vals, Ignored{})
		return i + 1, nil
	case '[':
		return d.array(enc, i)
	case '{':
		return d.structure(enc, i)
	}
	return 0, d.errf("unknown type %q in encoding %q", c, enc)
}

// scalar reads one value of the scalar type c (c C B s S i I l L q Q f d)
// into a Number of that type: c, B and the signed types fill Int, the
// unsigned types Uint, f and d Float. Integers must fit their type, B is 0
// or 1, and c, C and B are one raw byte (no tag processing).
func (d *decoder) scalar(c byte) (Number, error) {
	n := Number{Type: c}
	switch c {
	case 'c', 'C', 'B':
		b, err := d.head()
		if err != nil {
			return n, err
		}
		switch c {
		case 'c':
			n.Int = int64(int8(b))
		case 'C':
			n.Uint = uint64(b)
		default:
			if b > 1 {
				d.pos--
				return n, d.errf("bool byte 0x%02x is neither 0 nor 1", b)
			}
			n.Int = int64(b)
		}
	case 's', 'i', 'l', 'q':
		h, err := d.head()
		if err != nil {
			return n, err
		}
		v, err := d.signed(h)
		if err != nil {
			return n, err
		}
		if (c == 's' && v != int64(int16(v))) || ((c == 'i' || c == 'l') && v != int64(int32(v))) {
			return n, d.errf("integer %d does not fit type %c", v, c)
		}
		n.Int = v
	case 'S', 'I', 'L', 'Q':
		h, err := d.head()
		if err != nil {
			return n, err
		}
		v, err := d.unsigned(h)
		if err != nil {
			return n, err
		}
		if (c == 'S' && v > math.MaxUint16) || ((c == 'I' || c == 'L') && v > math.MaxUint32) {
			return n, d.errf("integer %d does not fit type %c", v, c)
		}
		n.Uint = v
	case 'f', 'd':
		h, err := d.head()
		if err != nil {
			return n, err
		}
		if h == tagFloat {
			if c == 'f' {
				b, err := d.take(4)
				if err != nil {
					return n, err
				}
				n.Float = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			} else {
				b, err := d.take(8)
				if err != nil {
					return n, err
				}
				n.Float = math.Float64frombits(binary.LittleEndian.Uint64(b))
			}
			return n, nil
		}
		v, err := d.signed(h)
		if err != nil {
			return n, err
		}
		n.Float = float64(v)
	default:
		return n, d.errf("type %q is not a scalar", c)
	}
	return n, nil
}

// typeEnd returns the index after the single type that starts at enc[i].
func typeEnd(enc []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(enc); j++ {
		switch enc[j] {
		case '[', '{':
			depth++
			if depth > maxDepth {
				return 0, errors.New("type encoding nested too deeply")
			}
		case ']', '}':
			depth--
			if depth < 0 {
				return 0, fmt.Errorf("unbalanced %q in encoding %q", enc[j], enc)
			}
		}
		if depth == 0 {
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated type in encoding %q", enc)
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth <= maxDepth {
		return nil
	}
	return d.tooDeep()
}

func (d *decoder) tooDeep() error { return d.errf("nesting deeper than %d", maxDepth) }

// array reads [Nt]: N raw bytes for t = c or C, else N values of type t.
func (d *decoder) array(enc []byte, i int) (int, error) {
	j := i + 1
	n := 0
	for j < len(enc) && enc[j] >= '0' && enc[j] <= '9' {
		n = n*10 + int(enc[j]-'0')
		if n > MaxInput {
			return 0, d.errf("array length in %q too large", enc)
		}
		j++
	}
	if j == i+1 || j >= len(enc) {
		return 0, d.errf("malformed array type in %q", enc)
	}
	end, err := typeEnd(enc, j)
	if err != nil {
		return 0, d.errf("%v", err)
	}
	if end >= len(enc) || enc[end] != ']' {
		return 0, d.errf("malformed array type in %q", enc)
	}
	if end == j+1 && (enc[j] == 'c' || enc[j] == 'C') {
		b, err := d.take(uint64(n))
		if err != nil {
			return 0, err
		}
		d.vals = append(d.vals, span(b))
		return end + 1, nil
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	start := len(d.vals)
	for k := 0; k < n; k++ {
		if _, err := d.value(enc, j); err != nil {
			return 0, err
		}
	}
	arr := make(CArray, n)
	for k := range arr {
		arr[k] = own(d.vals[start+k])
	}
	d.vals = append(d.vals[:start], arr)
	d.depth--
	return end + 1, nil
}

// structure reads {name=types}.
func (d *decoder) structure(enc []byte, i int) (int, error) {
	j := i + 1
	for j < len(enc) && enc[j] != '=' && enc[j] != '}' {
		j++
	}
	if j >= len(enc) {
		return 0, d.errf("unterminated struct type in %q", enc)
	}
	name := string(enc[i+1 : j])
	if enc[j] == '=' {
		j++
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	start := len(d.vals)
	for {
		if j >= len(enc) {
			return 0, d.errf("unterminated struct type in %q", enc)
		}
		if enc[j] == '}' {
			break
		}
		var err error
		if j, err = d.value(enc, j); err != nil {
			return 0, err
		}
	}
	st := &Struct{Name: name, Fields: make([]Value, len(d.vals)-start)}
	for k := range st.Fields {
		st.Fields[k] = own(d.vals[start+k])
	}
	d.vals = append(d.vals[:start], st)
	d.depth--
	return j + 1, nil
}

// own converts scratch-only values into values that may escape.
func own(v Value) Value {
	if s, ok := v.(span); ok {
		return Bytes(append([]byte(nil), s...))
	}
	return v
}

// cstring reads a '*' value: nil, a new C string (which takes an object-table
// slot) or a reference to one.
func (d *decoder) cstring() (Value, error) {
	h, err := d.head()
	if err != nil {
		return nil, err
	}
	switch h {
	case tagNil:
		return nil, nil
	case tagNew:
		h2, err := d.head()
		if err != nil {
			return nil, err
		}
		r, ok, err := d.sharedRef(h2)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, d.errf("nil C string literal")
		}
		s := d.str(r)
		for _, c := range s {
			if c == 0 {
				return nil, d.errf("C string contains NUL")
			}
		}
		v := cstringValue(s)
		d.slots = append(d.slots, slot{kind: slotCString, name: r, done: true})
		d.setVal(len(d.slots)-1, v)
		return v, nil
	}
	k, err := d.ref(h, len(d.slots))
	if err != nil {
		return nil, err
	}
	if d.slots[k].kind != slotCString {
		return nil, d.errf("C string reference %d points to a non-string", k)
	}
	return d.val(k), nil
}

// class reads a class chain whose first head is h and returns the slot of
// the first class, or -1 for nil. The new classes of one chain occupy
// consecutive slots; the chain ends in nil (a root class) or a reference to
// an earlier, complete class.
func (d *decoder) class(h byte) (int32, error) {
	first, n := int32(-1), int32(0)
	for {
		switch h {
		case tagNil:
			d.link(first, n, -1)
			return first, nil
		case tagNew:
			if n >= maxClassChain {
				return 0, d.errf("class chain longer than %d", maxClassChain)
			}
			if err := d.spend(1); err != nil {
				return 0, err
			}
			nh, err := d.head()
			if err != nil {
				return 0, err
			}
			name, ok, err := d.sharedRef(nh)
			if err != nil {
				return 0, err
			}
			if !ok || name.n == 0 {
				return 0, d.errf("class without a name")
			}
			vh, err := d.head()
			if err != nil {
				return 0, err
			}
			ver, err := d.signed(vh)
			if err != nil {
				return 0, err
			}
			k := int32(len(d.slots))
			d.slots = append(d.slots, slot{kind: slotClass, name: name, version: ver, super: -1, ck: kindOf(d.str(name)), done: true})
			if n == 0 {
				first = k
			}
			n++
			if h, err = d.head(); err != nil {
				return 0, err
			}
		default:
			i, err := d.ref(h, len(d.slots))
			if err != nil {
				return 0, err
			}
			k := int32(i)
			if d.slots[k].kind != slotClass {
				return 0, d.errf("class reference %d points to a non-class", k)
			}
			if n == 0 {
				return k, nil
			}
			if k >= first {
				return 0, d.errf("class chain refers to itself")
			}
			if d.slots[k].depth+n > maxClassChain {
				return 0, d.errf("class chain longer than %d", maxClassChain)
			}
			d.link(first, n, k)
			return first, nil
		}
	}
}

// link chains the n new classes at slots first.. to each other and to the
// superclass slot super (-1 for none), and records their chain depths.
func (d *decoder) link(first, n, super int32) {
	var base int32
	if super >= 0 {
		base = d.slots[super].depth
	}
	for i := int32(0); i < n; i++ {
		s := &d.slots[first+i]
		s.depth = base + n - i
		if i+1 < n {
			s.super = first + i + 1
		} else {
			s.super = super
		}
	}
}

// classValue builds (once) the *Class for a class slot.
func (d *decoder) classValue(k int32) *Class {
	if c, ok := d.val(int(k)).(*Class); ok {
		return c
	}
	s := d.slots[k]
	c := &Class{Name: string(d.str(s.name)), Version: s.version}
	if s.super >= 0 {
		c.Super = d.classValue(s.super)
	}
	d.setVal(int(k), c)
	return c
}

// object reads an '@' value whose head is h.
func (d *decoder) object(h byte) (Value, error) {
	switch h {
	case tagNil:
		return nil, nil
	case tagNew:
	default:
		k, err := d.ref(h, len(d.slots))
		if err != nil {
			return nil, err
		}
		s := &d.slots[k]
		if s.kind != slotObject {
			return nil, d.errf("object reference %d points to a class or C string", k)
		}
		if !s.done {
			return nil, d.errf("object reference %d is cyclic", k)
		}
		return d.val(k), nil
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	k := len(d.slots)
	d.slots = append(d.slots, slot{kind: slotObject, cls: -1})
	ch, err := d.head()
	if err != nil {
		return nil, err
	}
	cls, err := d.class(ch)
	if err != nil {
		return nil, err
	}
	if cls < 0 {
		return nil, d.errf("object without a class")
	}
	d.slots[k].cls = cls
	g0, v0 := len(d.groups), len(d.vals)
	for {
		h, err := d.head()
		if err != nil {
			return nil, err
		}
		if h == tagEnd {
			break
		}
		if err := d.group(h); err != nil {
			return nil, err
		}
	}
	v, err := d.finish(cls, d.groups[g0:])
	if err != nil {
		return nil, err
	}
	d.groups = d.groups[:g0]
	clear(d.vals[v0:])
	d.vals = d.vals[:v0]
	d.setVal(k, v)
	d.slots[k].done = true
	d.depth--
	return v, nil
}

// finish builds an object's value from its body groups.
func (d *decoder) finish(cls int32, gs []rawGroup) (Value, error) {
	var decoded Value
	if ck := d.slots[cls].ck; ck != ckUnknown {
		var err error
		if decoded, err = d.interpret(ck, gs); err != nil {
			return nil, err
		}
		if !d.raw {
			return decoded, nil
		}
	}
	return &Object{Class: d.classValue(cls), Groups: d.export(gs), Decoded: decoded}, nil
}

// export copies scratch groups into Groups that may escape.
func (d *decoder) export(gs []rawGroup) []Group {
	if len(gs) == 0 {
		return nil
	}
	n := 0
	for _, g := range gs {
		n += g.end - g.start
	}
	vals := make([]Value, n)
	out := make([]Group, len(gs))
	n = 0
	for i, g := range gs {
		vs := vals[n : n+g.end-g.start : n+g.end-g.start]
		for j := range vs {
			vs[j] = own(d.vals[g.start+j])
		}
		out[i] = Group{Encoding: string(g.enc), Values: vs}
		n += len(vs)
	}
	return out
}

// Archive is a decoded typedstream: the top-level groups in stream order.
// An object value in Groups is an *Object (call Interpret for its
// Foundation meaning).
type Archive struct {
	Groups []Group
}

// Values returns every top-level value in order, objects interpreted.
func (a *Archive) Values() []Value {
	var out []Value
	for _, g := range a.Groups {
		for _, v := range g.Values {
			out = append(out, interp(v))
		}
	}
	return out
}

// Root returns the first top-level value, interpreted (for iMessage bodies:
// the *AttributedString).
func (a *Archive) Root() Value {
	if len(a.Groups) == 0 || len(a.Groups[0].Values) == 0 {
		return nil
	}
	return interp(a.Groups[0].Values[0])
}

// Decode parses a complete typedstream (NSArchiver, little-endian, version 4)
// into its object model. The whole blob must be one well-formed stream:
// truncation, trailing bytes, out-of-range references, cycles, invalid UTF-8
// in an NSString and malformed Foundation bodies are errors, and no partial
// archive is ever returned with one. Objects of unknown classes decode
// generically as *Object with their raw groups.
func Decode(blob []byte) (*Archive, error) {
	d := getDecoder(blob, true)
	defer putDecoder(d)
	if err := d.decode(); err != nil {
		return nil, err
	}
	return &Archive{Groups: d.export(d.groups)}, nil
}

// interp returns the Foundation interpretation of an object value.
func interp(v Value) Value {
	if o, ok := v.(*Object); ok {
		return o.Interpret()
	}
	return v
}
