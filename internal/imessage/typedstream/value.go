package typedstream

import (
	"math"
	"net/url"
	"time"
)

// Value is one decoded typedstream value. The concrete types are listed
// below; the set is closed (the interface has an unexported method), so a
// type switch over them is exhaustive. A nil object, class, C string or
// unshared string decodes as a nil Value.
//
// Scalars and raw encodings:
//   - Int: c, s, i, l, q (signed integers)
//   - Uint: C, S, I, L, Q (unsigned integers)
//   - Float: f, d
//   - Bool: B
//   - Bytes: + (unshared byte string) and [Nc]/[NC] (char arrays)
//   - CString: *
//   - Atom: %; Selector: :
//   - Ignored: !
//   - *Class: #
//   - CArray: [Nt] for any other element type t
//   - *Struct: {name=...}
//   - *Object: @ (every archived object; see Object.Interpret)
//
// Foundation interpretations (what Object.Interpret returns for the known
// classes): String, *AttributedString, Dictionary, Array, Set, Number, Data,
// Date, *URL, Boxed (NSValue) and Null. Unknown classes stay *Object.
//
// Values decoded from one archive may be shared: an object that the stream
// references twice appears twice as the same Value. The graph is acyclic
// (the decoder rejects cycles), but code that walks it recursively should
// still remember what it has visited if it can be fed hostile input.
type Value interface{ isValue() }

// Int is a signed integer (c, s, i, l, q).
type Int int64

// Uint is an unsigned integer (C, S, I, L, Q).
type Uint uint64

// Float is a floating point number (f widened to 64 bits, d).
type Float float64

// Bool is a C99 bool (B).
type Bool bool

// Bytes is an unshared byte string (+) or a char array ([Nc]). It is a copy:
// it never aliases the decoded blob.
type Bytes []byte

// CString is a C string (*). It never contains NUL.
type CString string

// Atom is an NXAtom (%), a shared string.
type Atom string

// Selector is an Objective-C selector name (:).
type Selector string

// Ignored stands for a ! in an encoding, which carries no data.
type Ignored struct{}

// CArray is a C array [Nt] of a non-char element type.
type CArray []Value

// Struct is a C struct {name=...}.
type Struct struct {
	Name   string
	Fields []Value
}

// Class is an archived class: its name, class version, and superclass (nil
// for a root class such as NSObject).
type Class struct {
	Name    string
	Version int64
	Super   *Class
}

// Chain returns the class names from this class up to its root class.
func (c *Class) Chain() []string {
	var names []string
	for k := c; k != nil && len(names) < maxClassChain; k = k.Super {
		names = append(names, k.Name)
	}
	return names
}

// Is reports whether the class or one of its superclasses is named name.
func (c *Class) Is(name string) bool {
	for k, n := c, 0; k != nil && n < maxClassChain; k, n = k.Super, n+1 {
		if k.Name == name {
			return true
		}
	}
	return false
}

// Group is one typed-value group: an encoding string and one value per
// encoded type.
type Group struct {
	Encoding string
	Values   []Value
}

// Object is an archived object as written: its class and the groups of its
// body. For the Foundation classes this package knows, Decoded holds the
// interpretation (String, Dictionary, ...); it is nil for other classes.
//
// In an Archive from Decode every object is an *Object and every '@' value
// in Groups is an *Object too. AttributedBody keeps only interpretations on
// its fast path: there, a known Foundation object is its interpreted value,
// and an unknown one is an *Object whose Groups hold interpreted children.
// For the encoders, an *Object with nil Groups and a non-nil Decoded is
// written as Decoded under Class.
type Object struct {
	Class   *Class
	Groups  []Group
	Decoded Value
}

// Interpret returns the Foundation interpretation of the object when there is
// one, and the object itself otherwise. It is nil-safe.
func (o *Object) Interpret() Value {
	if o == nil {
		return nil
	}
	if o.Decoded != nil {
		return o.Decoded
	}
	return o
}

// String is the text of an NSString or NSMutableString (valid UTF-8).
type String string

// AttributedString is an NSAttributedString or NSMutableAttributedString:
// its text and its attribute runs (see Run).
type AttributedString struct {
	Text string
	Runs []Run
}

// Dictionary is an NSDictionary or NSMutableDictionary with its entries in
// stored order. Keys are usually String.
type Dictionary struct {
	Keys   []Value
	Values []Value
}

// Get returns the value stored under the string key, or nil.
func (d Dictionary) Get(key string) Value {
	for i, k := range d.Keys {
		if s, ok := k.(String); ok && string(s) == key {
			return d.Values[i]
		}
	}
	return nil
}

// Len returns the number of entries.
func (d Dictionary) Len() int { return len(d.Keys) }

// Array is an NSArray or NSMutableArray.
type Array []Value

// Set is an NSSet or NSMutableSet, in stored order.
type Set []Value

// Null is NSNull.
type Null struct{}

// Data is the content of an NSData or NSMutableData.
type Data []byte

// Date is an NSDate: seconds since 2001-01-01T00:00:00Z.
type Date float64

// AppleEpoch is the reference date of NSDate (2001-01-01T00:00:00Z).
var AppleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// Time converts the date to a time.Time (UTC).
func (d Date) Time() time.Time {
	f := float64(d)
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e11 {
		return time.Time{}
	}
	sec := math.Floor(f)
	return AppleEpoch.Add(time.Duration(sec)*time.Second + time.Duration((f-sec)*1e9))
}

// Number is an NSNumber. Type is the Objective-C type code it was archived
// with (c C s S i I l L q Q f d B); exactly one of Int, Uint or Float carries
// the value, by that type (B and c use Int).
type Number struct {
	Type  byte
	Int   int64
	Uint  uint64
	Float float64
}

// IsFloat reports whether the number was archived as f or d.
func (n Number) IsFloat() bool { return n.Type == 'f' || n.Type == 'd' }

// IsUnsigned reports whether the number was archived with an unsigned type.
func (n Number) IsUnsigned() bool {
	switch n.Type {
	case 'C', 'S', 'I', 'L', 'Q':
		return true
	}
	return false
}

// Int64 returns the value as an int64 and whether it is a whole number that
// fits.
func (n Number) Int64() (int64, bool) {
	switch {
	case n.IsFloat():
		if n.Float != math.Trunc(n.Float) || n.Float < -9.2e18 || n.Float > 9.2e18 {
			return 0, false
		}
		return int64(n.Float), true
	case n.IsUnsigned():
		if n.Uint > math.MaxInt64 {
			return 0, false
		}
		return int64(n.Uint), true
	}
	return n.Int, true
}

// Float64 returns the value as a float64.
func (n Number) Float64() float64 {
	switch {
	case n.IsFloat():
		return n.Float
	case n.IsUnsigned():
		return float64(n.Uint)
	}
	return float64(n.Int)
}

// URL is an NSURL: a string, relative to Base when Base is not nil.
type URL struct {
	Base     *URL
	Relative string
}

// String returns the absolute URL: Relative resolved against Base (RFC 3986)
// when there is a base, else Relative as stored.
func (u *URL) String() string {
	if u == nil {
		return ""
	}
	if u.Base == nil {
		return u.Relative
	}
	base, err := url.Parse(u.Base.String())
	if err != nil {
		return u.Relative
	}
	ref, err := url.Parse(u.Relative)
	if err != nil {
		return u.Relative
	}
	return base.ResolveReference(ref).String()
}

// Boxed is an NSValue: the Objective-C type encoding and the value.
type Boxed struct {
	Type  string
	Value Value
}

func (Int) isValue()               {}
func (Uint) isValue()              {}
func (Float) isValue()             {}
func (Bool) isValue()              {}
func (Bytes) isValue()             {}
func (CString) isValue()           {}
func (Atom) isValue()              {}
func (Selector) isValue()          {}
func (Ignored) isValue()           {}
func (CArray) isValue()            {}
func (*Struct) isValue()           {}
func (*Class) isValue()            {}
func (*Object) isValue()           {}
func (String) isValue()            {}
func (*AttributedString) isValue() {}
func (Dictionary) isValue()        {}
func (Array) isValue()             {}
func (Set) isValue()               {}
func (Null) isValue()              {}
func (Data) isValue()              {}
func (Date) isValue()              {}
func (Number) isValue()            {}
func (*URL) isValue()              {}
func (Boxed) isValue()             {}
