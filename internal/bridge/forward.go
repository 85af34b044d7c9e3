//go:build unix

package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

// Typed 1.3 extension actions carry a Go value each way: the request's
// params object is the JSON of a parameter value P, and a successful
// answer is {"id","ok":true,"action","result": <JSON of R>}. Nesting the
// result under "result" keeps any field name of R clear of the envelope.
// Both sides use the same Go types, so a value crosses the bridge exactly
// as it would be returned in-process — which is how `tidings serve
// --bridge` gives the same answers as the in-process mode.

// extResult is the shape of a typed extension answer.
type extResult[R any] struct {
	Result R `json:"result"`
}

// Handler builds a typed extension action: params decode into P by
// DecodeParams' rules, fn answers, and the result travels under "result".
// bodies marks an action that returns message content; it is never served
// on a manager bridge.
func Handler[P, R any](name string, bodies bool, fn func(ctx context.Context, b Backend, p P) (R, error)) Extension {
	return Extension{Name: name, Host: true, ReturnsBodies: bodies,
		Handle: func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
			p, err := DecodeParams[P](name, params)
			if err != nil {
				return nil, err
			}
			r, err := fn(ctx, b, p)
			if err != nil {
				return nil, err
			}
			return extResult[R]{Result: r}, nil
		}}
}

// Forward calls a typed extension action through c (speaking protocol
// 1.3) and decodes its result. The helper's status is checked first
// (Connect), and an extension the helper does not offer is reported as
// such, with the helper's version, instead of as an unknown action.
func Forward[R any](ctx context.Context, c *Client, action string, p any) (R, error) {
	var zero R
	st, err := c.Connect(ctx)
	if err != nil {
		return zero, err
	}
	if c.Version != Version13 {
		return zero, fmt.Errorf("%s is a protocol 1.3 action but this client speaks %s: %w", action, c.Version, ErrUnavailable)
	}
	if st.ProtocolVersion != Version13 {
		return zero, fmt.Errorf("%s needs bridge protocol 1.3 but the helper speaks %s: upgrade the helper (reinstall it with `tidings bridge install`): %w",
			action, st.ProtocolVersion, ErrUnavailable)
	}
	if !c.Offers(action) {
		c.forget() // the helper may be upgraded or restarted: ask again next time
		return zero, fmt.Errorf("the bridge helper (version %s, role %s) does not offer %s: %w", st.HelperVersion, st.BridgeRole, action, ErrUnavailable)
	}
	r, err := c.Call(ctx, action, p)
	if err != nil {
		var re *RemoteError
		if errors.Is(err, ErrTimeout) || errors.As(err, &re) && (re.Code == CodeUnknownAction || re.Code == CodeVersion || re.Code == CodeRoleInvalid) {
			c.forget() // the helper changed (or stopped) since Connect
		}
		return zero, err
	}
	var out extResult[R]
	if err := r.Decode(&out); err != nil {
		return zero, err
	}
	return out.Result, nil
}

// DecodeParams decodes a typed 1.3 action's params object into P (a struct
// whose JSON names are its fields' names or json tags). A model or a
// script may write these requests, so the rules are the ones every
// numeric argument of Tidings follows (internal/policy/coerce), leniently
// in form and strictly in value, and nothing is guessed:
//   - names match exactly, else ignoring case and underscores
//     ("conversation_id" is ConversationID); one field given twice under
//     two spellings is refused;
//   - a number field takes a JSON number or a numeric string; NaN,
//     infinities, magnitudes above 2^53, booleans, objects and lists are
//     refused; an integer field takes only whole values (5.0 is 5, 5.5 is
//     refused); the action then applies its own bounds;
//   - a string field takes only a string, a boolean field only true or
//     false, a time field only an RFC 3339 string;
//   - null means not given (the field's zero value, which the action
//     reads as its default);
//   - an unknown parameter with a zero value (null, 0, "", false, [], {})
//     is ignored, so a client built from a newer version that sends a new
//     field at its zero value still works; an unknown parameter with any
//     other value is refused with the list of known ones, because silently
//     ignoring a filter the caller asked for (a conversation, a date)
//     would answer a broader question than the one asked.
//
// Errors are *RequestError with code invalid_params and one sentence.
func DecodeParams[P any](action string, raw json.RawMessage) (P, error) {
	var p P
	t := reflect.TypeFor[P]()
	if t.Kind() != reflect.Struct {
		if err := json.Unmarshal(raw, &p); err != nil {
			return p, paramErrf("%s params do not match the expected shape: %v", action, err)
		}
		return p, nil
	}
	members, err := decodeObject(raw)
	if err != nil {
		return p, paramErrf("%s params must be a JSON object: %v", action, err)
	}
	fields := paramFields(t)
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic errors
	out := map[string]json.RawMessage{}
	given := map[string]string{} // field name → the key that set it
	for _, key := range keys {
		val := bytes.TrimSpace(members[key])
		f, ok := matchField(fields, key)
		if !ok {
			if zeroJSON(val) {
				continue
			}
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.name
			}
			return p, paramErrf("%s does not take the parameter %s (it takes %s); this helper may be older than the client: upgrade it",
				action, excerpt(key), strings.Join(names, ", "))
		}
		if prev, dup := given[f.name]; dup {
			return p, paramErrf("%s: the parameter %s is given twice (as %s and %s)", action, f.name, excerpt(prev), excerpt(key))
		}
		given[f.name] = key
		if string(val) == "null" {
			continue
		}
		v, err := coerceField(f, key, val)
		if err != nil {
			return p, err
		}
		out[f.name] = v
	}
	norm, err := json.Marshal(out)
	if err != nil {
		return p, paramErrf("%s params cannot be read: %v", action, err)
	}
	if err := json.Unmarshal(norm, &p); err != nil {
		return p, paramErrf("%s params do not match the expected shape: %v", action, err)
	}
	return p, nil
}

// paramField is one settable field of a params struct.
type paramField struct {
	name string // the JSON name
	typ  reflect.Type
}

func paramFields(t reflect.Type) []paramField {
	var out []paramField
	for f := range t.Fields() {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		out = append(out, paramField{name: name, typ: f.Type})
	}
	return out
}

func foldName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

func matchField(fields []paramField, key string) (paramField, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fields {
		if foldName(f.name) == foldName(key) {
			return f, true
		}
	}
	return paramField{}, false
}

var timeType = reflect.TypeFor[time.Time]()

// coerceField checks one value against its field's type and returns it in
// the form encoding/json accepts.
func coerceField(f paramField, key string, val json.RawMessage) (json.RawMessage, error) {
	typ := f.typ
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == timeType:
		var s string
		if !isString(val) || json.Unmarshal(val, &s) != nil {
			return nil, paramErrf("%s must be an RFC 3339 time string such as \"2026-11-30T09:00:00-08:00\"", f.name)
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, paramErrf("%s must be an RFC 3339 time such as \"2026-11-30T09:00:00-08:00\" (got %s)", f.name, excerpt(s))
		}
		return val, nil
	case typ.Kind() == reflect.String:
		if !isString(val) {
			return nil, paramErrf("%s must be a string", f.name)
		}
		return val, nil
	case typ.Kind() == reflect.Bool:
		if s := string(val); s != "true" && s != "false" {
			return nil, paramErrf("%s must be a JSON boolean (true or false)", f.name)
		}
		return val, nil
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64 || typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64:
		x, err := coerce.Float(val, coerce.FloatSpec{Name: f.name, Min: -coerce.MaxMagnitude, Max: coerce.MaxMagnitude})
		if err != nil {
			return nil, paramErrf("%s must be a finite number (a JSON number or a numeric string, at most 2^53 in magnitude); got %s", f.name, excerpt(string(val)))
		}
		isInt := typ.Kind() != reflect.Float32 && typ.Kind() != reflect.Float64
		if isInt && x != math.Trunc(x) {
			return nil, paramErrf("%s must be a whole number (got %s)", f.name, excerpt(string(val)))
		}
		if isInt && typ.Kind() >= reflect.Uint && x < 0 {
			return nil, paramErrf("%s must not be negative", f.name)
		}
		b, _ := json.Marshal(x)
		return b, nil
	}
	return val, nil
}

// zeroJSON reports whether val is null, 0, "", false, [] or {}.
func zeroJSON(val json.RawMessage) bool {
	switch s := string(val); s {
	case "null", "false", `""`:
		return true
	case "":
		return true
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(val))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// ToolExtension is the protocol 1.3 action that carries one Bridged
// service tool of the MCP server (docs/bridge.md, "Service tools through
// the bridge"): params are the tool call's arguments object, handed
// unchanged to call (the helper's in-process MCP server, which validates
// them against the tool's schema and runs the tool's own handler); the
// result is the tool's CallToolResult JSON under "result", isError
// results included (they are answers). Host only; it is treated as
// returning message bodies, so a manager bridge never serves it.
func ToolExtension(name string, call func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)) Extension {
	return Extension{Name: name, Host: true, ReturnsBodies: true,
		Handle: func(ctx context.Context, _ Backend, params json.RawMessage) (any, error) {
			res, err := call(ctx, params)
			if err != nil {
				return nil, err
			}
			return extResult[json.RawMessage]{Result: res}, nil
		}}
}

// ForwardTool calls the 1.3 action of a Bridged service tool with the
// call's arguments and returns the helper's CallToolResult JSON
// (ToolExtension).
func ForwardTool(ctx context.Context, c *Client, tool string, args json.RawMessage) (json.RawMessage, error) {
	return Forward[json.RawMessage](ctx, c, tool, args)
}
