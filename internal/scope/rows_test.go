package scope

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rows is the literal store most tables below scope: two accounts holding a
// "Work" each, a name containing "/", an account needing case folding and a
// name needing normalization.
var rows = []Row{
	{"iCloud", "Work", "c0"},
	{"iCloud", "Home", "c1"},
	{"Exchange", "Work", "c2"},
	{"iCloud", "Projects/2026", "c3"},
	{"Straße", "Plans", "c4"},
	{"iCloud", "Caf\u00e9", "c5"}, // composed é
}

func acc(vals ...string) Access { return Access{Field: CalendarAccounts, Values: vals} }
func cal(vals ...string) Access { return Access{Field: Calendars, Values: vals} }

var none = Access{Field: CalendarAccounts}
var noneN = Access{Field: Calendars}

func TestScopedRowsListOnlyWhatTheScopeReaches(t *testing.T) {
	dup := append(slices.Clone(rows), Row{"iCloud", "work", "c6"})
	dupAcct := []Row{{"Work", "Inbox", "a"}, {"WORK", "Inbox", "b"}}
	tests := []struct {
		name    string
		rows    []Row
		a, n    Access
		want    []int
		refused Decision // Allowed = admitted
		msg     []string // substrings of the refusal
	}{
		// admitted
		{name: "no scope lists every row", rows: rows, a: none, n: noneN, want: []int{0, 1, 2, 3, 4, 5}},
		{name: "account field keeps its accounts", rows: rows, a: acc("iCloud"), n: noneN, want: []int{0, 1, 3, 5}},
		{name: "name field keeps its paths", rows: rows, a: none, n: cal("iCloud/Work", "Exchange/Work"), want: []int{0, 2}},
		{name: "the two fields AND together", rows: rows, a: acc("iCloud"), n: cal("iCloud/Work", "Exchange/Work"), want: []int{0}},
		{name: "account folds case fully (Straße = STRASSE)", rows: rows, a: acc("STRASSE"), n: noneN, want: []int{4}},
		{name: "path folds composed and decomposed é", rows: rows, a: none, n: cal("icloud/CAFE\u0301"), want: []int{5}},
		{name: "a name may contain a slash and is matched whole", rows: rows, a: none, n: cal("iCloud/Projects/2026"), want: []int{3}},
		{name: "no scope and no rows is an honest empty list", rows: nil, a: none, n: noneN, want: nil},
		// refused
		{name: "a path value with two carriers is misconfigured", rows: dup, a: none, n: cal("iCloud/Work"), refused: Misconfigured,
			msg: []string{`calendars = "iCloud/Work"`, `"iCloud/Work" (id "c0")`, `"iCloud/work" (id "c6")`, "renamed"}},
		{name: "an account value with two carriers is misconfigured", rows: dupAcct, a: acc("work"), n: noneN, refused: Misconfigured,
			msg: []string{`calendar_accounts = "work"`, `"Work" and "WORK"`}},
		{name: "a path value naming nothing is the operator's typo", rows: rows, a: none, n: cal("iCloud/Wrok", "iCloud/Work"), refused: Unmatched,
			msg: []string{`calendars = "iCloud/Wrok" names no calendar here`}},
		{name: "an account value naming nothing is the operator's typo", rows: rows, a: acc("Gmail"), n: noneN, refused: Unmatched,
			msg: []string{`calendar_accounts = "Gmail" names no calendar account here`}},
		{name: "two real values with an empty cross product", rows: rows, a: acc("Exchange"), n: cal("iCloud/Home"), refused: Disjoint,
			msg: []string{"no calendar is in both"}},
		{name: "a field in force with no values grants nothing", rows: rows, a: Access{Field: CalendarAccounts, Values: []string{}}, n: noneN, refused: Empty,
			msg: []string{"grants no calendar"}},
		{name: "a scope over no rows is not an empty list", rows: nil, a: acc("iCloud"), n: noneN, refused: Unmatched},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScopedRows{Rows: tc.rows, Account: tc.a, Name: tc.n}.Allowed()
			if d := DecisionOf(err); d != tc.refused {
				t.Fatalf("decision = %v (%v), want %v", d, err, tc.refused)
			}
			if tc.refused == Allowed && !slices.Equal(got, tc.want) {
				t.Errorf("rows = %v, want %v", got, tc.want)
			}
			if tc.refused != Allowed && got != nil {
				t.Errorf("refusal returned rows %v", got)
			}
			for _, m := range tc.msg {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("error %v does not say %q", err, m)
				}
			}
			if IsViolation(err) {
				t.Errorf("a listing is never a violation: %v", err)
			}
		})
	}
}

func TestScopedRowsResolveExplicitNames(t *testing.T) {
	dup := append(slices.Clone(rows), Row{"iCloud", "work", "c6"})
	tests := []struct {
		name    string
		rows    []Row
		a, n    Access
		arg     string
		want    int
		refused Decision
	}{
		// admitted
		{name: "no scope, exact path", rows: rows, a: none, n: noneN, arg: "iCloud/Work", want: 0},
		{name: "no scope, folded path", rows: rows, a: none, n: noneN, arg: "ICLOUD/work", want: 0},
		{name: "account scope, its calendar", rows: rows, a: acc("iCloud"), n: noneN, arg: "iCloud/Home", want: 1},
		{name: "AND admits the one calendar in both", rows: rows, a: acc("iCloud"), n: cal("iCloud/Work", "Exchange/Work"), arg: "icloud/work", want: 0},
		{name: "decomposed argument, composed name", rows: rows, a: none, n: cal("iCloud/Café"), arg: "iCloud/Cafe\u0301", want: 5},
		{name: "slash inside the name", rows: rows, a: acc("iCloud"), n: noneN, arg: "iCloud/Projects/2026", want: 3},
		{name: "Straße and STRASSE are one account", rows: rows, a: acc("Straße"), n: noneN, arg: "STRASSE/plans", want: 4},
		{name: "same leaf in another account is not ambiguous inside the scope", rows: rows, a: none, n: cal("iCloud/Work"), arg: "iCloud/Work", want: 0},
		// refused
		{name: "existing calendar outside the name field", rows: rows, a: none, n: cal("iCloud/Work"), arg: "Exchange/Work", refused: Violation},
		{name: "missing calendar outside the name field", rows: rows, a: none, n: cal("iCloud/Work"), arg: "Exchange/Nope", refused: Violation},
		{name: "existing calendar outside the account field", rows: rows, a: acc("iCloud"), n: noneN, arg: "Exchange/Work", refused: Violation},
		{name: "outside the AND though inside each field alone", rows: rows, a: acc("iCloud"), n: cal("iCloud/Work", "Exchange/Work"), arg: "Exchange/Work", refused: Violation},
		{name: "missing calendar inside the account field", rows: rows, a: acc("iCloud"), n: noneN, arg: "iCloud/Nope", refused: NotFound},
		{name: "missing calendar and no scope", rows: rows, a: none, n: noneN, arg: "Nowhere/Nope", refused: NotFound},
		{name: "misconfigured scope refuses even an unrelated name", rows: dup, a: none, n: cal("iCloud/Work", "iCloud/Home"), arg: "iCloud/Home", refused: Misconfigured},
		{name: "typo in the scope is not a violation", rows: rows, a: none, n: cal("iCloud/Wrok"), arg: "Exchange/Work", refused: Unmatched},
		{name: "two rows with one path and no scope", rows: dup, a: none, n: noneN, arg: "iCloud/Work", refused: Duplicate},
		{name: "a bare leaf name is not a path", rows: rows, a: none, n: noneN, arg: "Work", refused: Invalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScopedRows{Rows: tc.rows, Account: tc.a, Name: tc.n}.Resolve(tc.arg)
			if d := DecisionOf(err); d != tc.refused {
				t.Fatalf("decision = %v (%v), want %v", d, err, tc.refused)
			}
			if tc.refused == Allowed && got != tc.want {
				t.Errorf("row = %d, want %d", got, tc.want)
			}
			if tc.refused != Allowed && got != -1 {
				t.Errorf("refusal returned row %d", got)
			}
			if IsViolation(err) != (tc.refused == Violation) {
				t.Errorf("IsViolation = %v for %v", IsViolation(err), err)
			}
		})
	}
}

// TestViolationDoesNotConfirmExistence: the refusal for a name outside
// the scope reads the same whether or not the resource exists.
func TestViolationDoesNotConfirmExistence(t *testing.T) {
	with := ScopedRows{Rows: rows, Account: none, Name: cal("iCloud/Work")}
	without := ScopedRows{Rows: []Row{{"iCloud", "Work", "c0"}}, Account: none, Name: cal("iCloud/Work")}
	_, e1 := with.Resolve("Exchange/Work")
	_, e2 := without.Resolve("Exchange/Work")
	if !IsViolation(e1) || !IsViolation(e2) || e1.Error() != e2.Error() {
		t.Fatalf("existing: %v; missing: %v", e1, e2)
	}
}

func TestScopedRowsWriteTargetStaysInScope(t *testing.T) {
	var many []Row
	for i := range 12 {
		many = append(many, Row{"iCloud", fmt.Sprintf("C%02d", i), fmt.Sprint(i)})
	}
	tests := []struct {
		name    string
		rows    []Row
		a, n    Access
		def     string
		want    int
		refused Decision
		msg     []string
		notMsg  []string
	}{
		// admitted
		{name: "default inside the scope", rows: rows, a: acc("iCloud"), n: noneN, def: "iCloud/Home", want: 1},
		{name: "default outside, one calendar in scope", rows: rows, a: none, n: cal("Exchange/Work"), def: "iCloud/Home", want: 2},
		{name: "no default, one calendar in scope", rows: rows, a: acc("iCloud"), n: cal("iCloud/Work", "Exchange/Work"), want: 0},
		{name: "no scope, default used", rows: rows, a: none, n: noneN, def: "Exchange/Work", want: 2},
		{name: "folded default", rows: rows, a: none, n: noneN, def: "exchange/WORK", want: 2},
		// refused
		{name: "default outside, two in scope: ask, never the default", rows: rows, a: none, n: cal("iCloud/Work", "Exchange/Work"), def: "iCloud/Home", refused: Choose,
			msg: []string{`"iCloud/Work"`, `"Exchange/Work"`}, notMsg: []string{"Home"}},
		{name: "no default, several and no scope", rows: rows[:2], a: none, n: noneN, refused: Choose, msg: []string{`one of "iCloud/Work", "iCloud/Home"`}},
		{name: "the choices are bounded", rows: many, a: none, n: noneN, refused: Choose, msg: []string{"(and 2 more)"}, notMsg: []string{"C10"}},
		{name: "nothing to write to", rows: nil, a: none, n: noneN, refused: Empty},
		{name: "misconfigured scope refuses the write", rows: append(slices.Clone(rows), Row{"ICLOUD", "WORK", "x"}), a: none, n: cal("iCloud/Work"), def: "iCloud/Work", refused: Misconfigured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScopedRows{Rows: tc.rows, Account: tc.a, Name: tc.n}.Target(tc.def)
			if d := DecisionOf(err); d != tc.refused {
				t.Fatalf("decision = %v (%v), want %v", d, err, tc.refused)
			}
			if tc.refused == Allowed && got != tc.want {
				t.Errorf("row = %d, want %d", got, tc.want)
			}
			for _, m := range tc.msg {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("error %v does not say %q", err, m)
				}
			}
			for _, m := range tc.notMsg {
				if err != nil && strings.Contains(err.Error(), m) {
					t.Errorf("error %v names %q", err, m)
				}
			}
		})
	}
}

func TestCardsAreScopedByAccountAlone(t *testing.T) {
	cards := []Row{{"iCloud", "Ann", "1"}, {"Work", "Bob", "2"}}
	s := Scope{values: map[Field][]string{ContactAccounts: {"work"}, ContactGroups: {"Work/Team"}}}
	sr := ScopedRows{Rows: cards, Account: s.Access(ContactAccounts), Noun: "contact"}
	got, err := sr.Allowed()
	if err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("cards = %v, %v", got, err)
	}
	if _, err := sr.Resolve("iCloud/Ann"); !IsViolation(err) || !strings.HasPrefix(err.Error(), "contact ") {
		t.Errorf("out-of-scope card: %v", err)
	}
}
