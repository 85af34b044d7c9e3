// Package coerce reads numeric tool arguments the way a careful server must:
// leniently in form, strictly in value.
//
// A model can send any JSON. "limit": 50, "limit": 50.0 and "limit": "50"
// all mean fifty and are accepted; "limit": "nan", 1e308, 2^63, 5.5 for a
// count, a negative count, true or {} are not, and nothing is ever
// converted blindly (a blind int conversion of 1e308 is how a peer server
// crashed, every tool with it). Each parameter has a spec with its
// documented bounds; a value outside them is either capped (Clamp, for
// "at most N" limits such as the 90-day read window) or rejected, and a
// rejection is one sentence naming the parameter and the accepted range,
// ready to be returned as an isError tool result.
//
// Rules shared by [Int], [Float] and [Days]:
//   - Accepted forms: JSON numbers, Go numeric values, numeric strings with
//     optional surrounding spaces and an optional sign, decimal point or
//     exponent ("50", " 7 ", "5.0", "1e2"). Hex, underscores and other Go
//     syntax are not numbers here.
//   - Absent: a missing value, JSON null, or an empty or blank string
//     means "not given" and yields the default (or an error when the spec
//     says Required).
//   - Never accepted: NaN and ±Inf in any spelling ("nan", "inf",
//     "Infinity"), booleans, objects, arrays, dates ("9999-12-31"), and any
//     magnitude above [MaxMagnitude] (2^53, beyond which a double no longer
//     holds the integer the caller wrote), whether or not the spec clamps.
//   - Below the minimum (including negatives where the minimum is 0 or 1)
//     is always rejected: there is no sensible reading of "limit": -1.
//   - Above the maximum: capped at the maximum when the spec's Clamp is
//     set, rejected otherwise.
//
// [Number] is a field type for tool input structs that accepts any of these
// forms; see its documentation for the JSON schema it needs.
package coerce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// MaxMagnitude is the largest absolute value any numeric argument may
// have: 2^53, the largest integer a JSON number (an IEEE double) represents
// exactly. Larger values are rejected as absurd even when a spec clamps.
const MaxMagnitude = 1 << 53

// IntSpec documents one integer parameter.
type IntSpec struct {
	// Name is the parameter name as the caller wrote it ("limit").
	Name string
	// Default is returned when the value is absent.
	Default int
	// Min and Max are the documented inclusive bounds.
	Min, Max int
	// Clamp caps values above Max at Max instead of rejecting them.
	Clamp bool
	// Required makes an absent value an error instead of Default.
	Required bool
}

// FloatSpec documents one real-valued parameter.
type FloatSpec struct {
	Name    string
	Default float64
	// Min and Max are the documented bounds; Max is inclusive, Min is
	// inclusive unless MinExclusive is set ("(0, 90]").
	Min, Max     float64
	MinExclusive bool
	// Clamp caps values above Max at Max instead of rejecting them.
	Clamp    bool
	Required bool
}

// DaysSpec documents a window in days: a number in (0, Max]. The bridge's
// review, search and chat_history cap their window at 90 days (Clamp:
// true; docs/bridge.md, "Actions and parameters"); list_chats validates its own bound of 3650 (Clamp: false).
type DaysSpec struct {
	Name     string // usually "days"
	Default  float64
	Max      float64
	Clamp    bool
	Required bool
}

// Int reads an integer parameter; see the package documentation.
func Int(v any, spec IntSpec) (int, error) {
	n, _, err := spec.Parse(v)
	return n, err
}

// Parse is [Int] that also reports whether the value was capped at Max, so
// a result can say so.
func (s IntSpec) Parse(v any) (n int, clamped bool, err error) {
	if s.Min > s.Max {
		return 0, false, fmt.Errorf("parameter %s has an empty range [%d, %d]", s.Name, s.Min, s.Max)
	}
	rng := fmt.Sprintf("an integer from %d to %d", s.Min, s.Max)
	f, present, err := read(v, s.Name, rng)
	if err != nil {
		return 0, false, err
	}
	if !present {
		if s.Required {
			return 0, false, fmt.Errorf("%s is required: give %s", s.Name, rng)
		}
		return s.Default, false, nil
	}
	if f != math.Trunc(f) {
		return 0, false, fmt.Errorf("%s must be %s (got %s, which is not a whole number)", s.Name, rng, fmtFloat(f))
	}
	if f < float64(s.Min) {
		return 0, false, fmt.Errorf("%s must be %s (got %s)", s.Name, rng, fmtFloat(f))
	}
	if f > float64(s.Max) {
		if !s.Clamp {
			return 0, false, fmt.Errorf("%s must be %s (got %s)", s.Name, rng, fmtFloat(f))
		}
		return s.Max, true, nil
	}
	// f is whole and inside [Min, Max], both of which are ints, so the
	// conversion is exact.
	return int(f), false, nil
}

// Float reads a real-valued parameter; see the package documentation.
func Float(v any, spec FloatSpec) (float64, error) {
	f, _, err := spec.Parse(v)
	return f, err
}

// Parse is [Float] that also reports whether the value was capped at Max.
func (s FloatSpec) Parse(v any) (f float64, clamped bool, err error) {
	lo := "at least " + fmtFloat(s.Min)
	if s.MinExclusive {
		lo = "greater than " + fmtFloat(s.Min)
	}
	rng := fmt.Sprintf("a number %s and at most %s", lo, fmtFloat(s.Max))
	if s.Min > s.Max || math.IsNaN(s.Min) || math.IsNaN(s.Max) || math.Abs(s.Min) > MaxMagnitude || math.Abs(s.Max) > MaxMagnitude {
		return 0, false, fmt.Errorf("parameter %s has an invalid range", s.Name)
	}
	f, present, err := read(v, s.Name, rng)
	if err != nil {
		return 0, false, err
	}
	if !present {
		if s.Required {
			return 0, false, fmt.Errorf("%s is required: give %s", s.Name, rng)
		}
		return s.Default, false, nil
	}
	if f < s.Min || s.MinExclusive && f == s.Min {
		return 0, false, fmt.Errorf("%s must be %s (got %s)", s.Name, rng, fmtFloat(f))
	}
	if f > s.Max {
		if !s.Clamp {
			return 0, false, fmt.Errorf("%s must be %s (got %s)", s.Name, rng, fmtFloat(f))
		}
		return s.Max, true, nil
	}
	return f, false, nil
}

// Days reads a window in days, a number in (0, spec.Max].
func Days(v any, spec DaysSpec) (float64, error) {
	f, _, err := spec.Parse(v)
	return f, err
}

// Parse is [Days] that also reports whether the value was capped at Max.
func (s DaysSpec) Parse(v any) (float64, bool, error) {
	return FloatSpec{Name: s.Name, Default: s.Default, Min: 0, MinExclusive: true, Max: s.Max, Clamp: s.Clamp, Required: s.Required}.Parse(v)
}

// read turns v into a finite float64 of sane magnitude, or reports that it
// is absent, or returns the one-sentence error for a value that is not a
// number at all. rng describes the accepted values for the message.
func read(v any, name, rng string) (f float64, present bool, err error) {
	bad := func(what string) error {
		return fmt.Errorf("%s must be %s (got %s)", name, rng, what)
	}
	switch x := v.(type) {
	case nil:
		return 0, false, nil
	case Number:
		return readJSON(x.raw, bad)
	case *Number:
		if x == nil {
			return 0, false, nil
		}
		return readJSON(x.raw, bad)
	case json.RawMessage:
		return readJSON(bytes.TrimSpace(x), bad)
	case json.Number:
		return readString(string(x), bad)
	case string:
		return readString(x, bad)
	case bool:
		return 0, false, bad("a boolean")
	case float32, float64:
		return checkFloat(reflect.ValueOf(x).Float(), bad)
	case int, int8, int16, int32, int64:
		return checkInt(reflect.ValueOf(x).Int(), bad)
	case uint, uint8, uint16, uint32, uint64:
		return checkUint(reflect.ValueOf(x).Uint(), bad)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map, reflect.Struct:
		return 0, false, bad("an object")
	case reflect.Slice, reflect.Array:
		return 0, false, bad("a list")
	}
	return 0, false, bad(fmt.Sprintf("a value of type %T", v))
}

func checkInt(x int64, bad func(string) error) (float64, bool, error) {
	if x > MaxMagnitude || x < -MaxMagnitude {
		return 0, false, bad(strconv.FormatInt(x, 10) + ", which is far out of range")
	}
	return float64(x), true, nil
}

func checkUint(x uint64, bad func(string) error) (float64, bool, error) {
	if x > MaxMagnitude {
		return 0, false, bad(strconv.FormatUint(x, 10) + ", which is far out of range")
	}
	return float64(x), true, nil
}

func checkFloat(f float64, bad func(string) error) (float64, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, bad(fmtFloat(f) + ", which is not a finite number")
	}
	if math.Abs(f) > MaxMagnitude {
		return 0, false, bad(fmtFloat(f) + ", which is far out of range")
	}
	return f, true, nil
}

// readJSON interprets one JSON value's text.
func readJSON(raw []byte, bad func(string) error) (float64, bool, error) {
	if len(raw) == 0 {
		return 0, false, nil
	}
	switch raw[0] {
	case 'n':
		if string(raw) == "null" {
			return 0, false, nil
		}
	case 't', 'f':
		return 0, false, bad("a boolean")
	case '{':
		return 0, false, bad("an object")
	case '[':
		return 0, false, bad("a list")
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, bad("malformed JSON")
		}
		return readString(s, bad)
	}
	if !isDecimal(string(raw)) {
		return 0, false, bad("malformed JSON")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || beyondMax(string(raw), f) { // ErrRange: out of float64 range
		return 0, false, bad(quote(string(raw)) + ", which is far out of range")
	}
	return checkFloat(f, bad)
}

// readString interprets a numeric string.
func readString(s string, bad func(string) error) (float64, bool, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false, nil
	}
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "nan", "inf", "infinity":
		return 0, false, bad(quote(s) + ", which is not a finite number")
	}
	u := strings.TrimPrefix(t, "+")
	if !isDecimal(u) {
		return 0, false, bad(quote(s) + ", which is not a number")
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || beyondMax(u, f) {
		return 0, false, bad(quote(s) + ", which is far out of range")
	}
	return checkFloat(f, bad)
}

// beyondMax reports whether the decimal text s, which parsed (rounded) to
// f, is above [MaxMagnitude] in magnitude although f is not: 2^53+1 and
// 2^53+0.5 round to exactly 2^53 as doubles, so only the text as written
// shows that the caller asked for more than the package accepts.
func beyondMax(s string, f float64) bool {
	if math.Abs(f) != MaxMagnitude {
		return false
	}
	exact, ok := new(big.Rat).SetString(s)
	if !ok {
		return false // isDecimal already vouched for s; unreachable
	}
	return exact.Abs(exact).Cmp(new(big.Rat).SetInt64(MaxMagnitude)) > 0
}

// isDecimal reports whether s is a decimal number in JSON's grammar,
// relaxed to allow leading zeros and a bare trailing or leading point:
// -?digits[.digits][(e|E)[+-]digits].
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// quote renders a caller-supplied string for an error message: quoted,
// and cut to 40 bytes so an error never echoes a huge argument.
func quote(s string) string {
	const limit = 40
	if len(s) > limit {
		cut := limit
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}
