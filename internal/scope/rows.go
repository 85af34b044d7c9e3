package scope

import (
	"fmt"
	"slices"
	"strings"
)

// Row is one resource a service holds: a mailbox, a calendar, a reminder
// list, a contact group (or, with no name field, a card). ID is opaque to
// this package; it tells apart rows that generate the same path.
type Row struct {
	Account, Name, ID string
}

// Path returns the row's Account/Name path.
func (r Row) Path() string { return r.Account + "/" + r.Name }

// Access is one field as it applies to a call. Values nil = the field is
// not in force (does not narrow); non-nil = the call reaches only what the
// values name (an empty list reaches nothing).
type Access struct {
	Field  Field
	Values []string
}

// InForce reports whether the field narrows.
func (a Access) InForce() bool { return a.Values != nil }

// ScopedRows is the pure seam every scoped service decides through: the
// rows it holds, the two fields of its Pair (ANDed), and three questions —
// which rows a listing shows (Allowed), which row an explicit name means
// (Resolve), and where a write without a target goes (Target). Results are
// row indices, not paths, because two rows can generate one path.
//
// Before any answer the scope is checked against the rows, so a broken
// scope refuses every call that touches it: a value with two carriers is
// Misconfigured (naming the value and both), a value with none is
// Unmatched, and an account field and a name field that each name real
// things but share no row are Disjoint. None of these is a violation.
type ScopedRows struct {
	Rows    []Row
	Account Access
	Name    Access
	// Noun names one row in sentences ("calendar"); "" = the name field's
	// noun.
	Noun string
}

func (s ScopedRows) noun() string {
	if s.Noun != "" {
		return s.Noun
	}
	if spec, ok := Lookup(string(s.Name.Field)); ok {
		return spec.Noun
	}
	return "resource"
}

func fieldNoun(f Field) string {
	if spec, ok := Lookup(string(f)); ok {
		return spec.Noun
	}
	return string(f)
}

// check validates the scope against the rows and returns the indices of
// the rows in scope.
func (s ScopedRows) check() ([]int, error) {
	for _, a := range []Access{s.Account, s.Name} {
		if a.InForce() && len(a.Values) == 0 {
			return nil, &Error{Decision: Empty, Message: fmt.Sprintf("this client's scope grants no %s (%s is an empty list)", s.noun(), a.Field)}
		}
	}
	// Accounts are told apart by their spelling: two spellings that fold
	// alike are two carriers.
	for _, v := range s.Account.Values {
		k := Fold(v)
		var carriers []string
		for _, r := range s.Rows {
			if Fold(r.Account) == k && !slices.Contains(carriers, r.Account) {
				carriers = append(carriers, r.Account)
			}
		}
		switch len(carriers) {
		case 0:
			return nil, s.unmatched(s.Account.Field, v)
		case 1:
		default:
			return nil, &Error{Decision: Misconfigured, Message: fmt.Sprintf(
				"scope value %s = %q matches two %ss, %q and %q: every call is refused until one of them is renamed",
				s.Account.Field, v, fieldNoun(s.Account.Field), carriers[0], carriers[1])}
		}
	}
	for _, v := range s.Name.Values {
		k := Fold(v)
		var carriers []int
		for i, r := range s.Rows {
			if Fold(r.Path()) == k {
				carriers = append(carriers, i)
			}
		}
		switch len(carriers) {
		case 0:
			return nil, s.unmatched(s.Name.Field, v)
		case 1:
		default:
			a, b := s.Rows[carriers[0]], s.Rows[carriers[1]]
			return nil, &Error{Decision: Misconfigured, Message: fmt.Sprintf(
				"scope value %s = %q matches two %ss, %q (id %q) and %q (id %q): every call is refused until one of them is renamed in the app that owns it",
				s.Name.Field, v, s.noun(), a.Path(), a.ID, b.Path(), b.ID)}
		}
	}
	var allowed []int
	for i, r := range s.Rows {
		if s.admitsRow(r) {
			allowed = append(allowed, i)
		}
	}
	if len(allowed) == 0 && s.Account.InForce() && s.Name.InForce() {
		return nil, &Error{Decision: Disjoint, Message: fmt.Sprintf(
			"scope fields %s and %s each name real ones here, but no %s is in both: fix the profile or the per-call scope",
			s.Account.Field, s.Name.Field, s.noun())}
	}
	return allowed, nil
}

func (s ScopedRows) unmatched(f Field, v string) error {
	return &Error{Decision: Unmatched, Message: fmt.Sprintf(
		"scope value %s = %q names no %s here: correct or remove it in the profile or the per-call scope", f, v, fieldNoun(f))}
}

func (s ScopedRows) admitsRow(r Row) bool {
	return s.admits(r.Account, r.Path())
}

// admits reports whether a resource of this account and path would be in
// scope, whether or not it exists.
func (s ScopedRows) admits(account, path string) bool {
	if s.Account.InForce() && !containsFold(s.Account.Values, account) {
		return false
	}
	if s.Name.InForce() && !containsFold(s.Name.Values, path) {
		return false
	}
	return true
}

// Allowed returns the indices of the rows a listing may show, in row
// order. With a scope in force the result is never empty: an empty
// intersection is an error (Disjoint, Unmatched or Empty), because an
// empty list would claim there is nothing to reach. With no scope in force
// and no rows, it is empty and nil.
func (s ScopedRows) Allowed() ([]int, error) {
	return s.check()
}

// Resolve returns the row an explicit Account/Name names. A name outside
// the scope is a Violation whose sentence is the same whether or not such
// a resource exists; a name inside it that names nothing is NotFound; a
// name two rows in scope generate is Duplicate.
func (s ScopedRows) Resolve(name string) (int, error) {
	allowed, err := s.check()
	if err != nil {
		return -1, err
	}
	p, err := ParsePath(name)
	if err != nil {
		return -1, &Error{Decision: Invalid, Message: fmt.Sprintf("name the %s as Account/Name (for example \"iCloud/Work\"): %v", s.noun(), err)}
	}
	k := Fold(name)
	var hits []int
	for _, i := range allowed {
		if Fold(s.Rows[i].Path()) == k {
			hits = append(hits, i)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		return -1, &Error{Decision: Duplicate, Message: fmt.Sprintf(
			"two %ss are both named %q and no argument can tell them apart: rename one in the app that owns it", s.noun(), name)}
	case s.admits(p.Account, name):
		return -1, &Error{Decision: NotFound, Message: fmt.Sprintf("there is no %s %q", s.noun(), name)}
	default:
		return -1, &Error{Decision: Violation, Message: fmt.Sprintf("%s %q is outside this client's scope", s.noun(), name)}
	}
}

// maxChoices bounds the names a Choose sentence lists.
const maxChoices = 10

// Target resolves a write without an explicit target, in three steps: the
// tool's default (def, an Account/Name path; "" = none) when it is in
// scope, else the single row in scope, else an error asking for one of
// the allowed names. It never falls through to a default outside the
// scope.
func (s ScopedRows) Target(def string) (int, error) {
	allowed, err := s.check()
	if err != nil {
		return -1, err
	}
	if len(allowed) == 0 {
		return -1, &Error{Decision: Empty, Message: fmt.Sprintf("there is no %s here", s.noun())}
	}
	if def != "" {
		k := Fold(def)
		var hits []int
		for _, i := range allowed {
			if Fold(s.Rows[i].Path()) == k {
				hits = append(hits, i)
			}
		}
		if len(hits) == 1 {
			return hits[0], nil
		}
	}
	if len(allowed) == 1 {
		return allowed[0], nil
	}
	names := make([]string, 0, maxChoices)
	for _, i := range allowed[:min(len(allowed), maxChoices)] {
		names = append(names, fmt.Sprintf("%q", s.Rows[i].Path()))
	}
	more := ""
	if len(allowed) > maxChoices {
		more = fmt.Sprintf(" (and %d more)", len(allowed)-maxChoices)
	}
	return -1, &Error{Decision: Choose, Message: fmt.Sprintf("say which %s to use: one of %s%s", s.noun(), strings.Join(names, ", "), more)}
}
