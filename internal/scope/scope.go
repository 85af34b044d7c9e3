package scope

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Scope is the effective scope of one call: for each field in force, its
// values. A field not in force does not narrow. A Scope is immutable.
type Scope struct {
	values map[Field][]string
}

// New builds a scope from field values; a nil slice means the field is not
// in force, a non-nil one (even empty) that it is. Every field name and
// value is checked (CheckValue).
func New(fields map[Field][]string) (Scope, error) {
	s := Scope{values: map[Field][]string{}}
	for f, vals := range fields {
		if vals == nil {
			continue
		}
		for _, v := range vals {
			if err := CheckValue(f, v); err != nil {
				return Scope{}, fmt.Errorf("%s: %w", f, err)
			}
		}
		s.values[f] = slices.Clone(vals)
	}
	return s, nil
}

// Values returns a field's values and whether the field is in force.
func (s Scope) Values(f Field) (vals []string, inForce bool) {
	vals, inForce = s.values[f]
	return slices.Clone(vals), inForce
}

// Unrestricted reports whether no field is in force.
func (s Scope) Unrestricted() bool { return len(s.values) == 0 }

// Access returns one field as ScopedRows takes it.
func (s Scope) Access(f Field) Access {
	vals, ok := s.values[f]
	if !ok {
		return Access{Field: f}
	}
	if vals == nil {
		vals = []string{}
	}
	return Access{Field: f, Values: slices.Clone(vals)}
}

// Rows scopes a service's resources by its pair of fields.
func (s Scope) Rows(p Pair, rows []Row) ScopedRows {
	return ScopedRows{Rows: rows, Account: s.Access(p.Account), Name: s.Access(p.Name)}
}

// Narrow intersects the scope with a per-call narrowing
// (_meta["tidings/scope"], docs/security.md "Scope fields"): each narrowed
// field's values replace the scope's. A narrowing may only take away: a
// value the scope does not reach is a Violation, so is a path whose account
// the scope's account field leaves out, and an account none of the scope's
// paths lives in. Values must be well formed (CheckValue); a malformed one
// is a plain error.
func (s Scope) Narrow(n map[Field][]string) (Scope, error) {
	out := Scope{values: maps.Clone(s.values)}
	if out.values == nil {
		out.values = map[Field][]string{}
	}
	for _, f := range slices.Sorted(maps.Keys(n)) {
		spec, ok := Lookup(string(f))
		if !ok {
			return Scope{}, fmt.Errorf("unknown scope field %q", f)
		}
		for _, v := range n[f] {
			if err := CheckValue(f, v); err != nil {
				return Scope{}, fmt.Errorf("%s: %w", f, err)
			}
			if !s.reaches(spec, v) {
				return Scope{}, &Error{Decision: Violation,
					Message: fmt.Sprintf("per-call scope %s value %q is outside this client's scope", f, v)}
			}
		}
		out.values[f] = slices.Clone(n[f])
	}
	return out, nil
}

// reaches reports whether value v of field spec lies within s.
func (s Scope) reaches(spec Spec, v string) bool {
	if vals, ok := s.values[spec.Field]; ok && !containsFold(vals, v) {
		return false
	}
	if spec.IsAccount() {
		// An account is outside a scope whose name field names no path in it.
		for _, sp := range Specs {
			if sp.Account != spec.Field {
				continue
			}
			if paths, ok := s.values[sp.Field]; ok && !slices.ContainsFunc(paths, func(p string) bool {
				pp, err := ParsePath(p)
				return err == nil && Fold(pp.Account) == Fold(v)
			}) {
				return false
			}
		}
		return true
	}
	p, _ := ParsePath(v) // checked by the caller
	if accts, ok := s.values[spec.Account]; ok && !containsFold(accts, p.Account) {
		return false
	}
	return true
}

func containsFold(vals []string, v string) bool {
	k := Fold(v)
	return slices.ContainsFunc(vals, func(x string) bool { return Fold(x) == k })
}

type ctxKey struct{}

// WithContext returns ctx carrying the call's effective scope. The MCP
// server's tools/call middleware (internal/mcpserver/scope.go) sets it on
// every call.
func WithContext(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// ErrNoScope is FromContext's error when the call carries no scope.
var ErrNoScope = errors.New("this call carries no scope (internal error: the tools/call scope middleware did not run)")

// FromContext returns the call's effective scope. A context without one is
// an error rather than "unrestricted", so a path that skipped the
// middleware fails closed.
func FromContext(ctx context.Context) (Scope, error) {
	s, ok := ctx.Value(ctxKey{}).(Scope)
	if !ok {
		return Scope{}, ErrNoScope
	}
	return s, nil
}

// Decision is what ScopedRows decided about a call.
type Decision int

// The decisions. Only Violation is a scope violation: the others are
// configuration problems or ordinary misses and carry no security signal
// (docs/security.md, "Scope fields").
const (
	// Allowed: the call may go on with the rows returned.
	Allowed Decision = iota
	// Violation: an explicit name outside the scope; refused with the same
	// sentence whether or not the resource exists.
	Violation
	// NotFound: a name that would be in scope but names no resource.
	NotFound
	// Misconfigured: a scope value matches two resources (or two accounts);
	// every call touching the field is refused until one is renamed.
	Misconfigured
	// Unmatched: a scope value names nothing here (an operator's typo or a
	// removed resource).
	Unmatched
	// Disjoint: an account field and a name field each name real things,
	// but no resource is in both.
	Disjoint
	// Empty: nothing to list or to write to: a field in force with no
	// values, or no resource at all and no scope in force.
	Empty
	// Duplicate: the caller named a path two resources generate; no
	// argument can tell them apart.
	Duplicate
	// Choose: a write without a target that the scope cannot settle.
	Choose
	// Invalid: the caller's name is not an Account/Name path.
	Invalid
)

var decisionNames = [...]string{"allowed", "violation", "not found", "misconfigured", "unmatched", "disjoint", "empty", "duplicate", "choose", "invalid"}

func (d Decision) String() string {
	if d >= 0 && int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Error is a refusal of ScopedRows or Narrow: one sentence and the
// decision behind it. The MCP server marks a result whose error is a
// Violation with _meta {"scope_violation": true}; any other Decision is an
// ordinary isError result.
type Error struct {
	Decision Decision
	Message  string
}

func (e *Error) Error() string { return e.Message }

// Violationf returns a Violation error for a handler that finds a
// resource outside the scope itself (for example a message whose mailbox
// it reads back after fetching it by id). The sentence must not say
// whether or where the resource exists.
func Violationf(format string, args ...any) error {
	return &Error{Decision: Violation, Message: fmt.Sprintf(format, args...)}
}

// DecisionOf returns the decision behind err: Allowed for nil, the
// Error's decision when err wraps one, and -1 for any other error.
func DecisionOf(err error) Decision {
	if err == nil {
		return Allowed
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Decision
	}
	return -1
}

// IsViolation reports whether err is, or wraps, a scope violation.
func IsViolation(err error) bool { return err != nil && DecisionOf(err) == Violation }
