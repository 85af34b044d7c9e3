package typedstream

import (
	"strconv"
	"unicode/utf8"
)

// The AttributedBody fast path.
//
// Messages writes every attributedBody in one shape: an NSAttributedString
// (or mutable) over an NSString (or mutable), then "iI" runs, each new run
// number followed by an NSDictionary of attributes whose values are
// NSStrings, NSNumbers, NSURLs, NSData and NSDictionaries of those. The fast
// path reads exactly that shape straight into the result: no scratch Value
// per group, no Dictionary value for a run's attributes, runs and run
// templates in pooled scratch space.
//
// It shares the reader's primitives (header, integers, shared strings, class
// chains, C strings, references, scalar values) and its run mapping
// (template, setOffsets), so each check is written once. It does not report
// errors: on anything it does not handle and on any malformed input it gives
// up (ok == false), and AttributedBody decodes the blob again with the
// generic reader, which returns the result or the precise error. The fast
// path must therefore never accept a blob the generic reader rejects, and
// must build the same text and runs; TestFastPathAgrees and
// FuzzAttributedBodyFastPath check both.
//
// Limits: the fast path counts object nesting like the generic reader
// (enter, maxDepth) and every loop consumes input. It does not charge the
// work budget beyond what the shared primitives charge: the shapes it
// accepts cost the generic reader at most about 6 work units per byte of
// input, well inside budgetPerByte, so the budget cannot reject a blob the
// fast path accepts.

// lazyKind marks object slots whose value the fast path did not build.
type lazyKind uint8

const (
	lazyNone lazyKind = iota
	// lazyString: an NSString whose text is in slot.name (valid UTF-8); its
	// String value is built on first reference.
	lazyString
	// lazyOpaque: a run's attribute dictionary, consumed into a run
	// template. A reference to it makes the fast path give up.
	lazyOpaque
)

// fastBody decodes blob (already in d) if it has the usual shape.
func (d *decoder) fastBody() (text string, runs []Run, ok bool) {
	if d.header() != nil || !d.encIs("@") {
		return "", nil, false
	}
	if h, ok := d.next(); !ok || h != tagNew {
		return "", nil, false
	}
	root, ck, ok := d.fastNew()
	if !ok || ck != ckAttributedString || !d.encIs("@") {
		return "", nil, false
	}
	if h, ok := d.next(); !ok || h != tagNew {
		return "", nil, false
	}
	ts, ck, ok := d.fastNew()
	if !ok || ck != ckString {
		return "", nil, false
	}
	tr, ok := d.fastStringBody()
	if !ok {
		return "", nil, false
	}
	tb := d.str(tr)
	d.slots[ts].name = tr
	d.fastDone(ts, nil, lazyString)

	limit := uint64(len(tb)) * 2 // a run of more UTF-16 units cannot fit
	// Run templates by dictionary number - 1, on the stack while they fit:
	// copying runs into heap scratch would cost GC write barriers.
	var tbuf [8]Run
	tmpls := tbuf[:0]
	for {
		h, ok := d.next()
		if !ok {
			return "", nil, false
		}
		if h == tagEnd {
			break
		}
		if enc, ok := d.encHead(h); !ok || string(enc) != "iI" {
			return "", nil, false
		}
		num, err := d.scalar('i')
		if err != nil {
			return "", nil, false
		}
		length, err := d.scalar('I')
		if err != nil {
			return "", nil, false
		}
		switch {
		case num.Int == int64(len(tmpls))+1:
			t, ok := d.fastAttributes()
			if !ok {
				return "", nil, false
			}
			tmpls = append(tmpls, t)
		case num.Int < 1 || num.Int > int64(len(tmpls)):
			return "", nil, false
		}
		if length.Uint > limit {
			return "", nil, false
		}
		d.recs = append(d.recs, runRec{tmpl: int(num.Int - 1), length: int(length.Uint)})
	}
	d.fastDone(root, nil, lazyOpaque)
	if d.pos != len(d.b) {
		return "", nil, false // trailing data: the generic reader says what
	}
	text = string(tb)
	if len(d.recs) > 0 {
		runs = make([]Run, len(d.recs))
		loc := 0
		for i, rec := range d.recs {
			setRun(&runs[i], &tmpls[rec.tmpl])
			runs[i].Location, runs[i].Length = loc, rec.length
			loc += rec.length
		}
	}
	if setOffsets(text, runs) != nil {
		return "", nil, false
	}
	return text, runs, true
}

// setRun sets the zero run *r to the template *t. It writes only the fields
// t sets: most are empty, and each pointer written to the heap during a GC
// cycle costs a write barrier.
func setRun(r, t *Run) {
	r.Part = t.Part
	r.OneTimeCode = t.OneTimeCode
	if t.AttachmentGUID != "" {
		r.AttachmentGUID = t.AttachmentGUID
	}
	if t.Filename != "" {
		r.Filename = t.Filename
	}
	if t.Mention != "" {
		r.Mention = t.Mention
	}
	if t.Link != "" {
		r.Link = t.Link
	}
	if t.Detected != nil {
		r.Detected = t.Detected
	}
	if t.Styles != nil {
		r.Styles = t.Styles
	}
	if t.Transcription != "" {
		r.Transcription = t.Transcription
	}
	r.Attrs = t.Attrs
}

// runRec is a run read by the fast path: its template (dictionary number
// - 1) and its UTF-16 length.
type runRec struct{ tmpl, length int }

// next reads one byte; unlike head it is small enough to be inlined.
func (d *decoder) next() (byte, bool) {
	if d.pos < len(d.b) {
		h := d.b[d.pos]
		d.pos++
		return h, true
	}
	return 0, false
}

// encIs reads a group's encoding and reports whether it is want.
func (d *decoder) encIs(want string) bool {
	h, ok := d.next()
	if !ok {
		return false
	}
	if i := int(int8(h)) - refBase; !isTag(h) && i < len(d.strs) {
		return string(d.str(d.strs[i])) == want // a one-byte reference, the usual case
	}
	enc, ok := d.encHead(h)
	return ok && string(enc) == want
}

// encHead reads a group's encoding whose head is h.
func (d *decoder) encHead(h byte) ([]byte, bool) {
	enc, ok, err := d.shared(h)
	return enc, ok && err == nil
}

// fastNew starts a new object after its 0x84 head: like the generic reader
// it takes the object's slot before reading the class chain. It returns the
// slot and the kind of the object's class.
func (d *decoder) fastNew() (int, classKind, bool) {
	if d.enter() != nil {
		return 0, ckUnknown, false
	}
	k := len(d.slots)
	d.slots = append(d.slots, slot{kind: slotObject, cls: -1})
	h, ok := d.next()
	if !ok {
		return 0, ckUnknown, false
	}
	cls, err := d.class(h)
	if err != nil || cls < 0 {
		return 0, ckUnknown, false
	}
	d.slots[k].cls = cls
	return k, d.slots[cls].ck, true
}

// fastDone completes the object in slot k, whose value is v unless lazy.
func (d *decoder) fastDone(k int, v Value, lazy lazyKind) {
	if lazy == lazyNone {
		d.setVal(k, v)
	}
	s := &d.slots[k]
	s.done, s.lazy = true, lazy
	d.depth--
}

// fastEnd reads an object's end tag.
func (d *decoder) fastEnd() bool {
	h, ok := d.next()
	return ok && h == tagEnd
}

// fastStringBody reads an NSString body (one "+" group, then the end tag)
// and returns its text, which must be valid UTF-8.
func (d *decoder) fastStringBody() (strRef, bool) {
	if !d.encIs("+") {
		return strRef{}, false
	}
	h, ok := d.next()
	if !ok {
		return strRef{}, false
	}
	s, ok, err := d.unshared(h)
	if err != nil || !ok {
		return strRef{}, false
	}
	r := strRef{off: int32(d.pos - len(s)), n: int32(len(s))}
	return r, d.fastEnd() && utf8.Valid(s)
}

// fastRef resolves an object reference whose head is h.
func (d *decoder) fastRef(h byte) (Value, bool) {
	k, err := d.ref(h, len(d.slots))
	if err != nil {
		return nil, false
	}
	s := &d.slots[k]
	if s.kind != slotObject || !s.done {
		return nil, false
	}
	switch s.lazy {
	case lazyString:
		s.lazy = lazyNone
		d.setVal(k, stringValue(d.str(s.name)))
	case lazyOpaque:
		return nil, false
	}
	return d.val(k), true
}

// fastAttributes reads the "@" group after a new run number, nil or a new
// NSDictionary, and returns its run template.
func (d *decoder) fastAttributes() (Run, bool) {
	if !d.encIs("@") {
		return Run{}, false
	}
	h, ok := d.next()
	if !ok {
		return Run{}, false
	}
	switch h {
	case tagNil:
		return Run{Part: -1}, true
	case tagNew:
	default:
		return Run{}, false // a reference to an earlier dictionary
	}
	k, ck, ok := d.fastNew()
	if !ok || ck != ckDictionary {
		return Run{}, false
	}
	n, ok := d.fastCount()
	if !ok {
		return Run{}, false
	}
	var b runBuilder
	b.start(n)
	for i := 0; i < n; i++ {
		key, val, ok := d.fastEntry()
		if !ok || !b.add(key, val) {
			return Run{}, false
		}
	}
	if !d.fastEnd() {
		return Run{}, false
	}
	d.fastDone(k, nil, lazyOpaque)
	return b.run(), true
}

// pop drops the keys and items above start.
func (d *decoder) pop(start int) {
	clear(d.keys[start:])
	clear(d.items[start:])
	d.keys, d.items = d.keys[:start], d.items[:start]
}

// fastCount reads an "i" or "I" count group (a container or NSData length).
func (d *decoder) fastCount() (int, bool) {
	h, ok := d.next()
	if !ok {
		return 0, false
	}
	enc, ok := d.encHead(h)
	if !ok || len(enc) != 1 || (enc[0] != 'i' && enc[0] != 'I') {
		return 0, false
	}
	n, err := d.scalar(enc[0])
	switch {
	case err != nil:
		return 0, false
	case enc[0] == 'i' && n.Int >= 0 && n.Int <= MaxInput:
		return int(n.Int), true
	case enc[0] == 'I' && n.Uint <= MaxInput:
		return int(n.Uint), true
	}
	return 0, false
}

// fastEntry reads one dictionary entry: an "@" group with the key, then an
// "@" group with the value.
func (d *decoder) fastEntry() (key, val Value, ok bool) {
	if !d.encIs("@") {
		return nil, nil, false
	}
	h, ok := d.next()
	if !ok {
		return nil, nil, false
	}
	if key, ok = d.fastObject(h); !ok || !d.encIs("@") {
		return nil, nil, false
	}
	if h, ok = d.next(); !ok {
		return nil, nil, false
	}
	val, ok = d.fastObject(h)
	return key, val, ok
}

// fastDict reads an NSDictionary body (after its class) and pushes its
// entries onto d.keys and d.items.
func (d *decoder) fastDict() bool {
	n, ok := d.fastCount()
	if !ok {
		return false
	}
	for i := 0; i < n; i++ {
		k, v, ok := d.fastEntry()
		if !ok {
			return false
		}
		d.keys = append(d.keys, k)
		d.items = append(d.items, v)
	}
	return d.fastEnd()
}

// fastObject reads an attribute value whose head is h: nil, a reference, or
// a new NSString, NSNumber, NSURL, NSData or NSDictionary.
func (d *decoder) fastObject(h byte) (Value, bool) {
	switch h {
	case tagNil:
		return nil, true
	case tagNew:
	default:
		return d.fastRef(h)
	}
	k, ck, ok := d.fastNew()
	if !ok {
		return nil, false
	}
	var v Value
	switch ck {
	case ckString:
		var r strRef
		if r, ok = d.fastStringBody(); ok {
			v = stringValue(d.str(r))
		}
	case ckNumber:
		v, ok = d.fastNumber()
	case ckURL:
		v, ok = d.fastURL()
	case ckData:
		v, ok = d.fastData()
	case ckDictionary:
		start := len(d.keys)
		if ok = d.fastDict(); ok {
			n := len(d.keys) - start
			kv := make([]Value, 2*n)
			dict := Dictionary{Keys: kv[:n:n], Values: kv[n:]}
			copy(dict.Keys, d.keys[start:])
			copy(dict.Values, d.items[start:])
			v = dict
		}
		d.pop(start)
	default:
		return nil, false
	}
	if !ok {
		return nil, false
	}
	d.fastDone(k, v, lazyNone)
	return v, true
}

// fastNumber reads an NSNumber body: a one-character "*" type, then one
// value of that scalar type.
func (d *decoder) fastNumber() (Value, bool) {
	if !d.encIs("*") {
		return nil, false
	}
	cv, err := d.cstring()
	t, ok := cv.(CString)
	if err != nil || !ok || len(t) != 1 || !d.encIs(string(t)) {
		return nil, false
	}
	n, err := d.scalar(t[0])
	if err != nil || !d.fastEnd() {
		return nil, false
	}
	return numberValue(n), true
}

// fastURL reads an absolute NSURL body: relative flag 0, then its NSString.
func (d *decoder) fastURL() (Value, bool) {
	if !d.encIs("c") {
		return nil, false
	}
	if flag, ok := d.next(); !ok || flag != 0 || !d.encIs("@") {
		return nil, false // a relative URL (flag 1) is left to the generic reader
	}
	h, ok := d.next()
	if !ok {
		return nil, false
	}
	var rel string
	if h == tagNew {
		k, ck, ok := d.fastNew()
		if !ok || ck != ckString {
			return nil, false
		}
		r, ok := d.fastStringBody()
		if !ok {
			return nil, false
		}
		d.slots[k].name = r
		d.fastDone(k, nil, lazyString)
		rel = string(d.str(r))
	} else {
		v, ok := d.fastRef(h)
		s, ok2 := v.(String)
		if !ok || !ok2 {
			return nil, false
		}
		rel = string(s)
	}
	if !d.fastEnd() {
		return nil, false
	}
	return &URL{Relative: rel}, true
}

// fastData reads an NSData body: its length, then "[Nc]" with N bytes (no
// second group when N is 0).
func (d *decoder) fastData() (Value, bool) {
	n, ok := d.fastCount()
	if !ok {
		return nil, false
	}
	h, ok := d.next()
	if !ok {
		return nil, false
	}
	if h == tagEnd {
		return emptyData, n == 0
	}
	enc, ok := d.encHead(h)
	var buf [24]byte
	want := append(strconv.AppendInt(append(buf[:0], '['), int64(n), 10), 'c', ']')
	if !ok || string(enc) != string(want) {
		return nil, false
	}
	b, err := d.take(uint64(n))
	if err != nil || !d.fastEnd() {
		return nil, false
	}
	if n == 0 {
		return emptyData, true
	}
	return Data(append([]byte{}, b...)), true
}
