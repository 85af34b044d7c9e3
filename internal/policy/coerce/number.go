package coerce

import (
	"bytes"
	"reflect"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// Number is the field type for a numeric parameter in an MCP tool's input
// struct. It keeps the JSON value as sent — integer, real, numeric string,
// null, or anything else — and never fails to unmarshal, so the decision and
// its one-sentence error belong to [Int], [Float] or [Days], which know the
// parameter's name and bounds:
//
//	type searchIn struct {
//		Query string        `json:"query"`
//		Limit coerce.Number `json:"limit,omitzero" jsonschema:"maximum results, 1-200 (default 20)"`
//	}
//	limit, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: 20, Min: 1, Max: 200, Clamp: true})
//
// # Schema
//
// go-sdk v1.8.0 infers input schemas with jsonschema-go's ForType and no
// options, and jsonschema-go has no per-type hook: a struct type such as
// Number is inferred as {"type":"object","additionalProperties":false},
// which would make the SDK reject "limit": 5 before the handler runs. A tool
// whose input uses Number must therefore set Tool.InputSchema itself:
//
//	schema, err := jsonschema.For[searchIn](&jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
//
// [TypeSchemas] maps Number to {"type":["integer","number","string","null"]},
// which is exactly what Number accepts before coercion (booleans, objects
// and lists are left to fail schema validation).
type Number struct {
	raw []byte // trimmed JSON text; nil when absent
}

// UnmarshalJSON stores the value unparsed. It never returns an error.
func (n *Number) UnmarshalJSON(b []byte) error {
	n.raw = append([]byte(nil), bytes.TrimSpace(b)...)
	return nil
}

// MarshalJSON writes the value back as it was received (null when absent).
func (n Number) MarshalJSON() ([]byte, error) {
	if len(n.raw) == 0 {
		return []byte("null"), nil
	}
	return n.raw, nil
}

// IsZero reports whether no value was given, so `omitzero` works and the
// field can be optional in the inferred schema.
func (n Number) IsZero() bool { return len(n.raw) == 0 }

// Given reports whether a non-null value was supplied.
func (n Number) Given() bool { return len(n.raw) != 0 && string(n.raw) != "null" }

// Raw returns the JSON text as received (empty when absent).
func (n Number) Raw() string { return string(n.raw) }

// NumberOf returns a Number holding the JSON text of an int, for callers
// and tests that build tool inputs in Go.
func NumberOf(i int64) Number { return Number{raw: strconv.AppendInt(nil, i, 10)} }

// NumberJSON returns a Number holding arbitrary JSON text as if it had been
// received in a request.
func NumberJSON(text string) Number {
	var n Number
	_ = n.UnmarshalJSON([]byte(text))
	return n
}

// NumberTypes are the JSON types a [Number] field declares in its schema.
var NumberTypes = []string{"integer", "number", "string", "null"}

// TypeSchemas returns the schema overrides a tool author passes to
// jsonschema.For / ForType (ForOptions.TypeSchemas) so Number fields get an
// honest schema; see [Number].
func TypeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Number](): {Types: append([]string(nil), NumberTypes...)},
	}
}
