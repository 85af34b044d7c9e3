package scope

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestFoldMatchesWholeNamesCaselesslyAcrossNormalForms(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"Straße", "STRASSE", true},
		{"Straße", "strasse", true},
		{"Caf\u00e9", "CAFE\u0301", true},      // composed vs decomposed
		{"\ufb01les/Work", "FILES/work", true}, // ligature
		{"\u212a", "k", true},                  // Kelvin sign
		{"Ｗｏｒｋ", "work", true},                 // full-width
		{"Work", "Wörk", false},
		{"Work", "Work ", false},
		{"iCloud/Work", "iCloud/Work/", false},
		{"Cafe", "Café", false},
	}
	for _, tc := range tests {
		if got := Fold(tc.a) == Fold(tc.b); got != tc.same {
			t.Errorf("Fold(%q)==Fold(%q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestParsePathSplitsAtTheFirstSlash(t *testing.T) {
	tests := []struct {
		in      string
		want    Path
		wantErr string
	}{
		{in: "iCloud/Work", want: Path{"iCloud", "Work"}},
		{in: "iCloud/Projects/2026", want: Path{"iCloud", "Projects/2026"}},
		{in: "iCloud/ Work ", want: Path{"iCloud", " Work "}},
		{in: "", wantErr: "empty"},
		{in: "Work", wantErr: "not an Account/Name path"},
		{in: "/Work", wantErr: "no account"},
		{in: " /Work", wantErr: "no account"},
		{in: "iCloud/", wantErr: "no name"},
		{in: "iCloud/\t", wantErr: "control character"},
		{in: "i\uff0fCloud/Work", wantErr: "folds to a name containing"},
		{in: "iCloud/\xff", wantErr: "UTF-8"},
	}
	for _, tc := range tests {
		got, err := ParsePath(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePath(%q) = %v, %v; want error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("ParsePath(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckValueByFieldKind(t *testing.T) {
	tests := []struct {
		f    Field
		v    string
		good bool
	}{
		{MailAccounts, "Work", true},
		{MailAccounts, "Work/Inbox", false},
		{MailAccounts, " ", false},
		{MailMailboxes, "Work/Inbox", true},
		{MailMailboxes, "Inbox", false},
		{ContactGroups, "iCloud/Family/Close", true},
		{Field("calendar"), "iCloud/Work", false},
	}
	for _, tc := range tests {
		if err := CheckValue(tc.f, tc.v); (err == nil) != tc.good {
			t.Errorf("CheckValue(%s, %q) = %v, want good=%v", tc.f, tc.v, err, tc.good)
		}
	}
}

func TestEveryFieldHasASpecAndNameFieldsPairWithTheirAccountField(t *testing.T) {
	if len(Specs) != 8 {
		t.Fatalf("%d specs, want the seed's eight", len(Specs))
	}
	for _, p := range []Pair{Mail, Calendar, Reminders, Contacts} {
		a, okA := Lookup(string(p.Account))
		n, okN := Lookup(string(p.Name))
		if !okA || !okN || !a.IsAccount() || n.Account != p.Account || a.Service != n.Service {
			t.Errorf("pair %v: %+v %+v", p, a, n)
		}
	}
}

func TestNarrowTakesAwayAndNeverWidens(t *testing.T) {
	profile := func(m map[Field][]string) Scope {
		s, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name    string
		profile map[Field][]string
		narrow  map[Field][]string
		want    map[Field][]string // effective values of the narrowed fields
		refused Decision           // Allowed, Violation, or -1 = malformed
	}{
		// admitted
		{name: "narrower path", profile: map[Field][]string{Calendars: {"iCloud/Work", "iCloud/Home"}},
			narrow: map[Field][]string{Calendars: {"icloud/WORK"}}, want: map[Field][]string{Calendars: {"icloud/WORK"}}},
		{name: "unrestricted profile takes any narrowing", profile: nil,
			narrow: map[Field][]string{MailMailboxes: {"Work/Inbox"}}, want: map[Field][]string{MailMailboxes: {"Work/Inbox"}}},
		{name: "path in the profile's account", profile: map[Field][]string{CalendarAccounts: {"iCloud"}},
			narrow: map[Field][]string{Calendars: {"iCloud/Home"}}, want: map[Field][]string{Calendars: {"iCloud/Home"}, CalendarAccounts: {"iCloud"}}},
		{name: "account a profile path lives in", profile: map[Field][]string{Calendars: {"iCloud/Work"}},
			narrow: map[Field][]string{CalendarAccounts: {"ICLOUD"}}, want: map[Field][]string{CalendarAccounts: {"ICLOUD"}}},
		{name: "folded account", profile: map[Field][]string{MailAccounts: {"Straße"}},
			narrow: map[Field][]string{MailAccounts: {"STRASSE"}}, want: map[Field][]string{MailAccounts: {"STRASSE"}}},
		// refused
		{name: "wider path", profile: map[Field][]string{Calendars: {"iCloud/Work"}},
			narrow: map[Field][]string{Calendars: {"iCloud/Work", "Exchange/Work"}}, refused: Violation},
		{name: "path in an account the profile leaves out", profile: map[Field][]string{CalendarAccounts: {"iCloud"}},
			narrow: map[Field][]string{Calendars: {"Exchange/Work"}}, refused: Violation},
		{name: "account no profile path lives in", profile: map[Field][]string{Calendars: {"iCloud/Work"}},
			narrow: map[Field][]string{CalendarAccounts: {"Exchange"}}, refused: Violation},
		{name: "account outside the profile's accounts", profile: map[Field][]string{ContactAccounts: {"iCloud"}},
			narrow: map[Field][]string{ContactAccounts: {"Work"}}, refused: Violation},
		{name: "malformed path", profile: nil, narrow: map[Field][]string{Calendars: {"Work"}}, refused: -1},
		{name: "unknown field", profile: nil, narrow: map[Field][]string{"calendar": {"iCloud/Work"}}, refused: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := profile(tc.profile).Narrow(tc.narrow)
			if d := DecisionOf(err); d != tc.refused {
				t.Fatalf("decision = %v (%v), want %v", d, err, tc.refused)
			}
			for f, want := range tc.want {
				if vals, ok := got.Values(f); !ok || !slices.Equal(vals, want) {
					t.Errorf("%s = %v (%v), want %v", f, vals, ok, want)
				}
			}
		})
	}
}

func TestFromContextFailsClosedWithoutAScope(t *testing.T) {
	if _, err := FromContext(context.Background()); !errors.Is(err, ErrNoScope) {
		t.Fatalf("err = %v", err)
	}
	s, _ := New(map[Field][]string{Calendars: {"iCloud/Work"}})
	got, err := FromContext(WithContext(context.Background(), s))
	if vals, _ := got.Values(Calendars); err != nil || !slices.Equal(vals, []string{"iCloud/Work"}) {
		t.Fatalf("got %v, %v", vals, err)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"iCloud/Work", "a/b/c", "/x", "x/", "Straße/Plans", "i\uff0fCloud/W", "\xff/a", "a/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("ParsePath(%q) = %#v, does not rebuild the input", s, p)
		}
		if p.Account == "" || p.Name == "" || strings.Contains(Fold(p.Account), "/") {
			t.Fatalf("ParsePath(%q) = %#v", s, p)
		}
		if err := CheckAccount(p.Account); err != nil {
			t.Fatalf("ParsePath(%q) accepted account %q that CheckAccount refuses: %v", s, p.Account, err)
		}
		if Fold(Fold(s)) != Fold(s) {
			t.Fatalf("Fold is not idempotent on %q", s)
		}
	})
}
