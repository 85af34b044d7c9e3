package typedstream

import (
	"strconv"
	"unicode/utf8"
)

// classKind identifies the Foundation classes whose bodies this package
// interprets. Only exact class names count: a subclass this package does not
// know may archive more, so it stays a generic *Object.
type classKind uint8

const (
	ckUnknown classKind = iota
	ckString
	ckAttributedString
	ckDictionary
	ckArray
	ckSet
	ckNumber
	ckValue
	ckData
	ckDate
	ckURL
	ckNull
)

func kindOf(name []byte) classKind {
	switch string(name) {
	case "NSString", "NSMutableString":
		return ckString
	case "NSAttributedString", "NSMutableAttributedString":
		return ckAttributedString
	case "NSDictionary", "NSMutableDictionary":
		return ckDictionary
	case "NSArray", "NSMutableArray":
		return ckArray
	case "NSSet", "NSMutableSet":
		return ckSet
	case "NSNumber":
		return ckNumber
	case "NSValue":
		return ckValue
	case "NSData", "NSMutableData":
		return ckData
	case "NSDate":
		return ckDate
	case "NSURL":
		return ckURL
	case "NSNull":
		return ckNull
	}
	return ckUnknown
}

var kindNames = [...]string{
	ckString: "NSString", ckAttributedString: "NSAttributedString", ckDictionary: "NSDictionary",
	ckArray: "NSArray", ckSet: "NSSet", ckNumber: "NSNumber", ckValue: "NSValue", ckData: "NSData",
	ckDate: "NSDate", ckURL: "NSURL", ckNull: "NSNull",
}

func (d *decoder) bad(ck classKind, msg string) error {
	return d.errf("%s body: %s", kindNames[ck], msg)
}

// one returns the single value of g if its encoding is enc.
func (d *decoder) one(g rawGroup, enc string) (Value, bool) {
	if string(g.enc) != enc || g.end-g.start != 1 {
		return nil, false
	}
	return d.vals[g.start], true
}

// count reads a container count group ("i" or "I").
func (d *decoder) count(g rawGroup) (int, bool) {
	if g.end-g.start != 1 || (string(g.enc) != "i" && string(g.enc) != "I") {
		return 0, false
	}
	switch v := d.vals[g.start].(type) {
	case Int:
		if v >= 0 && int64(v) <= MaxInput {
			return int(v), true
		}
	case Uint:
		if v <= MaxInput {
			return int(v), true
		}
	}
	return 0, false
}

// interpret decodes the body of a known Foundation class.
func (d *decoder) interpret(ck classKind, gs []rawGroup) (Value, error) {
	switch ck {
	case ckString:
		if len(gs) == 1 {
			if v, ok := d.one(gs[0], "+"); ok {
				if s, ok := v.(span); ok {
					if !utf8.Valid(s) {
						return nil, d.bad(ck, "text is not valid UTF-8")
					}
					return stringValue(s), nil
				}
			}
		}
		return nil, d.bad(ck, "want one + group")
	case ckAttributedString:
		return d.attributed(gs)
	case ckDictionary:
		if len(gs) == 0 {
			return nil, d.bad(ck, "missing count")
		}
		n, ok := d.count(gs[0])
		if !ok || len(gs) != 1+2*n {
			return nil, d.bad(ck, "count does not match its entries")
		}
		kv := make([]Value, 2*n)
		dict := Dictionary{Keys: kv[:n:n], Values: kv[n:]}
		for i := 0; i < n; i++ {
			k, ok1 := d.one(gs[1+2*i], "@")
			v, ok2 := d.one(gs[2+2*i], "@")
			if !ok1 || !ok2 {
				return nil, d.bad(ck, "entry is not a pair of @ groups")
			}
			dict.Keys[i], dict.Values[i] = interp(k), interp(v)
		}
		return dict, nil
	case ckArray, ckSet:
		if len(gs) == 0 {
			return nil, d.bad(ck, "missing count")
		}
		n, ok := d.count(gs[0])
		if !ok || len(gs) != 1+n {
			return nil, d.bad(ck, "count does not match its items")
		}
		items := make([]Value, n)
		for i := range items {
			v, ok := d.one(gs[1+i], "@")
			if !ok {
				return nil, d.bad(ck, "item is not an @ group")
			}
			items[i] = interp(v)
		}
		if ck == ckSet {
			return Set(items), nil
		}
		return Array(items), nil
	case ckNumber, ckValue:
		if len(gs) != 2 {
			return nil, d.bad(ck, "want a type group and a value group")
		}
		tv, ok := d.one(gs[0], "*")
		t, ok2 := tv.(CString)
		if !ok || !ok2 || len(t) == 0 || string(gs[1].enc) != string(t) {
			return nil, d.bad(ck, "type and value groups disagree")
		}
		if ck == ckValue {
			if gs[1].end-gs[1].start != 1 {
				return nil, d.bad(ck, "want one value")
			}
			return Boxed{Type: string(t), Value: own(d.vals[gs[1].start])}, nil
		}
		v, ok := d.one(gs[1], string(t))
		if !ok || len(t) != 1 {
			return nil, d.bad(ck, "type "+strconv.Quote(string(t))+" is not a scalar")
		}
		n := Number{Type: t[0]}
		switch x := v.(type) {
		case Int:
			n.Int = int64(x)
		case Uint:
			n.Uint = uint64(x)
		case Float:
			n.Float = float64(x)
		case Bool:
			if x {
				n.Int = 1
			}
		default:
			return nil, d.bad(ck, "type "+strconv.Quote(string(t))+" is not a scalar")
		}
		return numberValue(n), nil
	case ckData:
		if len(gs) == 0 {
			return nil, d.bad(ck, "missing length")
		}
		n, ok := d.count(gs[0])
		if !ok {
			return nil, d.bad(ck, "bad length")
		}
		if n == 0 && len(gs) == 1 {
			return emptyData, nil
		}
		if len(gs) != 2 || string(gs[1].enc) != "["+strconv.Itoa(n)+"c]" {
			return nil, d.bad(ck, "length does not match its bytes")
		}
		v, _ := d.one(gs[1], string(gs[1].enc))
		b, ok := v.(span)
		if !ok || len(b) != n {
			return nil, d.bad(ck, "length does not match its bytes")
		}
		return Data(append([]byte{}, b...)), nil
	case ckDate:
		if len(gs) == 1 {
			if v, ok := d.one(gs[0], "d"); ok {
				return Date(v.(Float)), nil
			}
		}
		return nil, d.bad(ck, "want one d group")
	case ckURL:
		if len(gs) < 2 {
			return nil, d.bad(ck, "want a flag and a string")
		}
		fv, ok := d.one(gs[0], "c")
		if !ok {
			return nil, d.bad(ck, "missing relative flag")
		}
		u := &URL{}
		rest := gs[1:]
		switch fv.(Int) {
		case 0:
		case 1:
			bv, ok := d.one(rest[0], "@")
			base, ok2 := interp(bv).(*URL)
			if !ok || !ok2 || len(rest) != 2 {
				return nil, d.bad(ck, "relative URL without a base URL")
			}
			u.Base, rest = base, rest[1:]
		default:
			return nil, d.bad(ck, "relative flag is neither 0 nor 1")
		}
		if len(rest) != 1 {
			return nil, d.bad(ck, "want one string")
		}
		sv, ok := d.one(rest[0], "@")
		s, ok2 := interp(sv).(String)
		if !ok || !ok2 {
			return nil, d.bad(ck, "URL string is not an NSString")
		}
		u.Relative = string(s)
		return u, nil
	case ckNull:
		if len(gs) != 0 {
			return nil, d.bad(ck, "NSNull with a body")
		}
		return Null{}, nil
	}
	return nil, nil
}
