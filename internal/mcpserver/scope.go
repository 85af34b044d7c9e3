package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// MetaScopeKey is the tools/call _meta key that narrows one call's scope
// (docs/security.md, "Scope fields"). Only this key matters: every
// 2026-07-28 request carries _meta, so its presence alone says nothing.
const MetaScopeKey = "tidings/scope"

// MetaScopeViolation is the result _meta key set (to true) on a refusal
// that is a scope violation, and only on one: misconfigurations, typos and
// misses carry no _meta at all.
const MetaScopeViolation = "scope_violation"

// Scope returns the scope the profile grants: its scope fields that are
// set. A nil profile grants an unrestricted scope.
func (p *Profile) Scope() (scope.Scope, error) {
	if p == nil {
		return scope.New(nil)
	}
	return scope.New(p.scopeFields())
}

func (p *Profile) scopeFields() map[scope.Field][]string {
	return map[scope.Field][]string{
		scope.MailAccounts:     p.MailAccounts,
		scope.MailMailboxes:    p.MailMailboxes,
		scope.CalendarAccounts: p.CalendarAccounts,
		scope.Calendars:        p.Calendars,
		scope.ReminderAccounts: p.ReminderAccounts,
		scope.ReminderLists:    p.ReminderLists,
		scope.ContactAccounts:  p.ContactAccounts,
		scope.ContactGroups:    p.ContactGroups,
	}
}

// scopeCalls is the receiving middleware that gives every tools/call its
// effective scope: the profile's, narrowed by _meta["tidings/scope"] when
// the call carries that key. A malformed narrowing (not an object, an
// unknown field, a value that is not a non-empty array of well-formed
// strings) is -32602 naming the key; a value outside the profile is a
// violation result. Handlers read the scope with scope.FromContext and
// return ScopedRows' errors (or scope.Violationf) as ordinary errors; a
// result whose error is a violation leaves with _meta
// {"scope_violation": true}.
func scopeCalls(base scope.Scope) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			eff := base
			if params, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && params != nil {
				if raw, present := params.Meta[MetaScopeKey]; present {
					n, err := parseNarrowing(raw)
					if err != nil {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: sanitize.Message(err.Error())}
					}
					if eff, err = base.Narrow(n); err != nil {
						if scope.IsViolation(err) {
							return violationResult(err), nil
						}
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: sanitize.Message(err.Error())}
					}
				}
			}
			res, err := next(scope.WithContext(ctx, eff), method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError && scope.IsViolation(r.GetError()) {
				if r.Meta == nil {
					r.Meta = mcp.Meta{}
				}
				r.Meta[MetaScopeViolation] = true
			}
			return res, err
		}
	}
}

func violationResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: sanitize.Message(err.Error())}},
		Meta:    mcp.Meta{MetaScopeViolation: true},
	}
}

// parseNarrowing checks _meta["tidings/scope"]: an object whose keys are
// scope fields and whose values are non-empty arrays of well-formed
// strings (scope.CheckValue).
func parseNarrowing(raw any) (map[scope.Field][]string, error) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("_meta[%q] must be an object of scope fields, not %s", MetaScopeKey, jsonKind(raw))
	}
	out := map[scope.Field][]string{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := scope.Lookup(k); !ok {
			return nil, fmt.Errorf("_meta[%q] has unknown key %q (known: %s)", MetaScopeKey, k, knownFields())
		}
		var vals []string
		switch v := obj[k].(type) {
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("_meta[%q].%s must be an array of strings, and holds %s", MetaScopeKey, k, jsonKind(e))
				}
				vals = append(vals, s)
			}
		case []string:
			vals = v
		default:
			return nil, fmt.Errorf("_meta[%q].%s must be an array of strings, not %s", MetaScopeKey, k, jsonKind(v))
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("_meta[%q].%s is empty: name at least one value, or leave the key out", MetaScopeKey, k)
		}
		for _, s := range vals {
			if err := scope.CheckValue(scope.Field(k), s); err != nil {
				return nil, fmt.Errorf("_meta[%q].%s: %w", MetaScopeKey, k, err)
			}
		}
		out[scope.Field(k)] = vals
	}
	return out, nil
}

func knownFields() string {
	names := make([]string, len(scope.Specs))
	for i, s := range scope.Specs {
		names[i] = string(s.Field)
	}
	return strings.Join(names, ", ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
