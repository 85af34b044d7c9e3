package contacts

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

func day(d int) time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) } // literal date: ordering only, no clock

func mustBook(t testing.TB, region string, cards ...model.Contact) *Book {
	t.Helper()
	b, err := NewBook(cards, region)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func handleKeys(p Person) []string {
	var out []string
	for _, h := range p.Handles {
		out = append(out, h.Key)
	}
	return out
}

func TestBookMergesDuplicateCards(t *testing.T) {
	cards := []model.Contact{
		{Source: "addressbook", ID: "1", First: "Angel", Last: "Vossough", Phones: []string{"(415) 555-1234"}, Modified: day(10)},
		{Source: "vcard", ID: "x", FullName: "Angel Vossough", Phones: []string{"+1 415-555-1234", "+1 415 555 9000"}, Modified: day(5)},
		// Shares only the e-mail with the vCard's second number's owner chain: transitive.
		{Source: "ios-addressbook", ID: "9", First: "Angel", Phones: []string{"415.555.9000"}, Emails: []string{"ANGEL@example.com"}},
		{Source: "vcard", ID: "y", FullName: "Someone Else", Emails: []string{"other@example.com"}},
	}
	b := mustBook(t, "US", cards...)
	if got := b.Stats(); got != (BookStats{Cards: 4, People: 2, Handles: 4, Merged: 1}) {
		t.Errorf("stats = %+v", got)
	}
	p, ok := b.Resolve("+14155551234")
	if !ok {
		t.Fatal("not resolved")
	}
	if p.Name != "Angel Vossough" || p.First != "Angel" || p.Last != "Vossough" {
		t.Errorf("person = %+v", p)
	}
	if want := []string{"+14155551234", "+14155559000", "angel@example.com"}; !reflect.DeepEqual(handleKeys(p), want) {
		t.Errorf("handles = %v, want %v", handleKeys(p), want)
	}
	if len(p.Cards) != 3 || p.Cards[0].Source != "addressbook" {
		t.Errorf("cards = %+v", p.Cards)
	}
	// Every handle of the person resolves to the same id.
	for _, h := range []string{"415-555-9000", "angel@EXAMPLE.com", "(415) 555 1234"} {
		if q, ok := b.Resolve(h); !ok || q.ID != p.ID {
			t.Errorf("Resolve(%q) = %v, %v; want person %s", h, q.ID, ok, p.ID)
		}
	}
	// Only the first of the other names counts once; "Angel" alone is another name.
	if !p.NameConflict || !reflect.DeepEqual(p.AlsoKnownAs, []string{"Angel"}) {
		t.Errorf("aka = %v conflict %v", p.AlsoKnownAs, p.NameConflict)
	}
}

func TestBookStaleCardDoesNotWin(t *testing.T) {
	newer := model.Contact{Source: "addressbook", ID: "icloud/7", First: "Robert", Last: "Smith", Phones: []string{"+1 212 555 0100"}, Modified: day(2000)}
	stale := model.Contact{Source: "addressbook", ID: "local/3", First: "Bob", Last: "Smyth", Phones: []string{"212-555-0100"}, Emails: []string{"bob@old.example"}, Modified: day(10)}
	undated := model.Contact{Source: "vcard", ID: "sha256:00", FullName: "B. S.", Phones: []string{"2125550100"}}
	unnamedNewest := model.Contact{Source: "vcard", ID: "sha256:01", Phones: []string{"+12125550100"}, Modified: day(3000)}
	for _, order := range [][]model.Contact{
		{newer, stale, undated, unnamedNewest},
		{unnamedNewest, undated, stale, newer},
		{stale, unnamedNewest, newer, undated},
	} {
		b := mustBook(t, "US", order...)
		// Even a handle only the stale card has shows the newest name.
		for _, h := range []string{"+12125550100", "bob@old.example"} {
			p, ok := b.Resolve(h)
			if !ok || p.Name != "Robert Smith" {
				t.Fatalf("Resolve(%q) = %q, %v; want Robert Smith", h, p.Name, ok)
			}
			if !reflect.DeepEqual(p.AlsoKnownAs, []string{"Bob Smyth", "B. S."}) || !p.NameConflict {
				t.Errorf("aka = %v", p.AlsoKnownAs)
			}
			if !p.Modified.Equal(day(3000)) {
				t.Errorf("modified = %v", p.Modified)
			}
		}
	}
}

func TestBookTiesAreDeterministic(t *testing.T) {
	cards := []model.Contact{
		{Source: "vcard", ID: "b", FullName: "Name From B", Phones: []string{"+33612345678"}, Modified: day(1)},
		{Source: "vcard", ID: "a", FullName: "Name From A", Phones: []string{"06 12 34 56 78"}, Modified: day(1)},
		{Source: "addressbook", ID: "z", FullName: "Name From Z", Emails: []string{"x@y.fr"}, Phones: []string{"0612345678"}, Modified: day(1)},
		{Source: "vcard", ID: "c", FullName: "Other", Phones: []string{"+33 7 00 00 00 00"}},
	}
	var first []Person
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		shuffled := slices.Clone(cards)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b := mustBook(t, "FR", shuffled...)
		if i == 0 {
			first = b.People()
			if p, _ := b.Resolve("+33612345678"); p.Name != "Name From Z" {
				t.Fatalf("tie winner = %q, want the lowest source+id (addressbook/z)", p.Name)
			}
			continue
		}
		if !reflect.DeepEqual(b.People(), first) {
			t.Fatalf("order %d gave different people:\n%+v\n%+v", i, b.People(), first)
		}
	}
}

func TestPersonIDStable(t *testing.T) {
	card := model.Contact{Source: "addressbook", ID: "42", First: "Ann", Phones: []string{"+1 415 555 0101"}}
	b1 := mustBook(t, "US", card)
	card.First, card.Phones = "Annie", []string{"+1 415 555 0199"}
	b2 := mustBook(t, "US", card, model.Contact{Source: "vcard", ID: "q", FullName: "Annie", Phones: []string{"+1 415 555 0199"}})
	p1, p2 := b1.People()[0], b2.People()
	if len(p2) != 1 || p1.ID != p2[0].ID || !strings.HasPrefix(p1.ID, "p") || len(p1.ID) != 17 {
		t.Fatalf("ids %q vs %+v", p1.ID, p2)
	}
	if got, ok := b2.Person(p1.ID); !ok || got.Name != "Annie" {
		t.Errorf("Person(%q) = %+v, %v", p1.ID, got, ok)
	}
	if _, ok := b2.Person("pnope"); ok {
		t.Error("unknown id found")
	}
	// The same card read twice (same source and id) is one person even
	// without handles.
	nameOnly := model.Contact{Source: "vcard", ID: "u1", FullName: "Solo"}
	if b := mustBook(t, "US", nameOnly, nameOnly); len(b.People()) != 1 {
		t.Errorf("duplicate card ref gave %d people", len(b.People()))
	}
}

func TestResolveTiers(t *testing.T) {
	cards := []model.Contact{
		{Source: "vcard", ID: "us", FullName: "Uma US", Phones: []string{"(415) 555-1234"}, Emails: []string{"Uma@Example.com"}},
		// Typed without country code while the region is FR: no country known.
		{Source: "vcard", ID: "nocc", FullName: "Nora No-Country", Phones: []string{"6505550111"}},
		{Source: "vcard", ID: "fr", FullName: "Fanny France", Phones: []string{"06 12 34 56 78"}},
		{Source: "vcard", ID: "de", FullName: "Dieter Deutsch", Phones: []string{"+49 30 1234567"}},
		{Source: "vcard", ID: "sc", FullName: "Bank Alerts", Phones: []string{"32665"}},
		{Source: "vcard", ID: "an", FullName: "Amazon", Phones: []string{"AMAZON"}},
		// Two people whose numbers share their last ten digits.
		{Source: "vcard", ID: "t1", FullName: "Twin One", Phones: []string{"+1 202 555 0177"}},
		{Source: "vcard", ID: "t2", FullName: "Twin Two", Phones: []string{"+44 20 2555 0177"}},
	}
	bFR := mustBook(t, "FR", cards...)
	bUS := mustBook(t, "US", cards...)
	tests := []struct {
		name      string
		book      *Book
		handle    string
		want      string
		by        MatchBy
		ambiguous int
	}{
		{"e164 exact", bUS, "+14155551234", "Uma US", ByKey, 0},
		{"any format", bUS, "415.555.1234", "Uma US", ByKey, 0},
		{"email folded", bUS, "UMA@example.COM", "Uma US", ByKey, 0},
		{"fr card, fr region", bFR, "+33612345678", "Fanny France", ByKey, 0},
		{"de stays de", bUS, "+49301234567", "Dieter Deutsch", ByKey, 0},
		{"last10 when the card had no country", bFR, "+16505550111", "Nora No-Country", ByLast10, 0},
		{"national when the card was typed nationally abroad", bUS, "+33612345678", "Fanny France", ByNational, 0},
		{"short code", bUS, "32665", "Bank Alerts", ByKey, 0},
		{"alnum", bUS, "AMAZON", "Amazon", ByKey, 0},
		{"last10 ambiguity is reported", bUS, "+33 2025550177", "", ByLast10, 2},
		{"unknown number", bUS, "+14155550000", "", "", 0},
		{"unknown email", bUS, "nobody@example.com", "", "", 0},
		{"garbage", bUS, "???", "", "", 0},
		{"empty", bUS, "", "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.book.ResolveHandle(tc.handle)
			if r.Found != (tc.want != "") || r.Person.Name != tc.want || r.By != tc.by || len(r.Ambiguous) != tc.ambiguous {
				t.Errorf("ResolveHandle(%q) = found %v name %q by %q ambiguous %v; want %q by %q (%d ambiguous)",
					tc.handle, r.Found, r.Person.Name, r.By, r.Ambiguous, tc.want, tc.by, tc.ambiguous)
			}
			if got := tc.book.DisplayName(tc.handle); got != tc.want {
				t.Errorf("DisplayName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewBookRegion(t *testing.T) {
	if _, err := NewBook(nil, "XX"); err == nil {
		t.Error("unknown region accepted")
	}
	b, err := NewBook(nil, "")
	if err != nil || b.Region() != "US" {
		t.Errorf("default region: %v %v", b, err)
	}
	if p, ok := b.Resolve("+14155551234"); ok {
		t.Errorf("empty book resolved %+v", p)
	}
}

func lookupBook(t testing.TB) *Book {
	return mustBook(t, "US",
		model.Contact{Source: "vcard", ID: "1", First: "Angel", Last: "Vossough", Phones: []string{"+1 415 555 1234"}},
		model.Contact{Source: "vcard", ID: "2", First: "Angela", Last: "Smith", Emails: []string{"Angela@Example.com"}},
		model.Contact{Source: "vcard", ID: "3", First: "Zoë", Last: "Müller", Nickname: "Zozo", Phones: []string{"+49 151 12345678"}},
		model.Contact{Source: "vcard", ID: "4", First: "Jean-Luc", Last: "Picard", Phones: []string{"+33 6 12 34 56 78"}},
		model.Contact{Source: "vcard", ID: "5", FullName: "Angel", Emails: []string{"angel@exact.example"}},
		model.Contact{Source: "vcard", ID: "6", Organization: "Blue Bottle Coffee", Phones: []string{"32665"}},
		model.Contact{Source: "vcard", ID: "7", First: "Dup", Last: "Name", Phones: []string{"+1 212 555 0101"}},
		model.Contact{Source: "vcard", ID: "8", First: "Dup", Last: "Name", Phones: []string{"+1 212 555 0102"}},
		model.Contact{Source: "vcard", ID: "9", First: "Michael", Last: "Angelo"},
	)
}

func names(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestLookupRanksMatchesByQualityAndFlagsAmbiguity: Lookup matches names
// ignoring case, accents and word order, lists exact matches first, then
// field, prefix, word-prefix and substring matches, each with its quality,
// marks a query matching several people as ambiguous, and refuses an empty
// or over-long query.
func TestLookupRanksMatchesByQualityAndFlagsAmbiguity(t *testing.T) {
	b := lookupBook(t)
	tests := []struct {
		query     string
		want      []string
		ambiguous bool
	}{
		{"Angel", []string{"Angel", "Angel Vossough", "Angela Smith", "Michael Angelo"}, false}, // exact, first name, prefix, word prefix
		{"angel vossough", []string{"Angel Vossough"}, false},
		{"ANG VOSS", []string{"Angel Vossough"}, false},
		{"zoe", []string{"Zoë Müller"}, false},
		{"MULLER", []string{"Zoë Müller"}, false},
		{"zozo", []string{"Zoë Müller"}, false},
		{"luc", []string{"Jean-Luc Picard"}, false},
		{"picard jean", []string{"Jean-Luc Picard"}, false},
		{"bottle", []string{"Blue Bottle Coffee"}, false},
		{"dup name", []string{"Dup Name", "Dup Name"}, true},
		{"ange", []string{"Angel", "Angel Vossough", "Angela Smith", "Michael Angelo"}, true},
		{"nobody", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			res, err := b.Lookup(tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res.Matches); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lookup(%q) = %v, want %v", tc.query, got, tc.want)
			}
			if res.Ambiguous != tc.ambiguous || res.Total != len(tc.want) || res.Truncated {
				t.Errorf("ambiguous %v total %d truncated %v", res.Ambiguous, res.Total, res.Truncated)
			}
		})
	}
	res, _ := b.Lookup("angel", nil)
	if m := res.Matches[0]; m.Quality != QualityExact || m.Email != "angel@exact.example" || m.Phone10 != "" {
		t.Errorf("exact match = %+v", m)
	}
	if m := res.Matches[1]; m.Quality != QualityField || m.Phone10 != "4155551234" || m.Email != "" {
		t.Errorf("field match = %+v", m)
	}
	if q := res.Matches[3].Quality; q != QualityWords {
		t.Errorf("Michael Angelo quality = %v, want words", q)
	}
	if res, _ := b.Lookup("ossou", nil); len(res.Matches) != 1 || res.Matches[0].Quality != QualitySubstring {
		t.Errorf("substring: %+v", res.Matches)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("a", MaxQueryRunes+1)} {
		if _, err := b.Lookup(bad, nil); err == nil {
			t.Errorf("Lookup(%q) accepted", bad)
		}
	}
}

func TestLookupCapAndFilter(t *testing.T) {
	var cards []model.Contact
	for i := 0; i < 40; i++ {
		cards = append(cards, model.Contact{Source: "vcard", ID: fmt.Sprint(i), First: "Sam", Last: fmt.Sprintf("Member%02d", i),
			Phones: []string{fmt.Sprintf("+1 415 555 %04d", i)}})
	}
	b := mustBook(t, "US", cards...)
	res, err := b.Lookup("sam", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != MaxMatches || res.Total != 40 || !res.Truncated || !res.Ambiguous {
		t.Fatalf("matches %d total %d truncated %v ambiguous %v", len(res.Matches), res.Total, res.Truncated, res.Ambiguous)
	}
	if res.Matches[0].Name != "Sam Member00" || res.Matches[24].Name != "Sam Member24" {
		t.Errorf("not sorted by name: %v", names(res.Matches))
	}
	// The filter runs before the cut: only numbers ending in 1 or 3 are allowed.
	keep := func(p Person) bool {
		return strings.HasSuffix(p.Handles[0].Key, "1") || strings.HasSuffix(p.Handles[0].Key, "3")
	}
	res, _ = b.Lookup("sam", keep)
	if res.Total != 8 || len(res.Matches) != 8 || res.Truncated {
		t.Errorf("filtered: total %d matches %d", res.Total, len(res.Matches))
	}
	for _, m := range res.Matches {
		if p, _ := b.Person(m.PersonID); !keep(p) {
			t.Errorf("filtered-out person %s returned", m.Name)
		}
	}
}

func TestResolveName(t *testing.T) {
	b := lookupBook(t)
	if p, err := b.ResolveName("zoe muller", nil); err != nil || p.Name != "Zoë Müller" {
		t.Errorf("unique: %+v %v", p, err)
	}
	// One exact full-name match among other candidates is not a guess.
	if p, err := b.ResolveName("Angel", nil); err != nil || p.Name != "Angel" {
		t.Errorf("exact: %+v %v", p, err)
	}
	_, err := b.ResolveName("ange", nil)
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Total != 4 || len(amb.Candidates) != 4 || !strings.Contains(err.Error(), "Angel Vossough") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := b.ResolveName("Dup Name", nil); !errors.As(err, &amb) {
		t.Errorf("two exact matches must be ambiguous: %v", err)
	}
	if _, err := b.ResolveName("nobody", nil); !errors.Is(err, ErrNoMatch) {
		t.Errorf("no match: %v", err)
	}
	// The filter can make a name unique.
	onlyVossough := func(p Person) bool { return p.Last == "Vossough" }
	if p, err := b.ResolveName("ange", onlyVossough); err != nil || p.Last != "Vossough" {
		t.Errorf("filtered: %+v %v", p, err)
	}
}

// TestFoldIgnoresCaseAccentsAndSpacing: fold lower-cases, strips accents,
// spells out ligatures and letters like ß, Ø, Ł, Ĳ, turns a typographic
// apostrophe into ' and collapses spaces, so names compare the way a person
// types them.
func TestFoldIgnoresCaseAccentsAndSpacing(t *testing.T) {
	for in, want := range map[string]string{
		"Zoë":                "zoe",
		"  Jürgen   MÜLLER ": "jurgen muller",
		"Straße":             "strasse",
		"Søren Ærø":          "soren aero",
		"Łukasz":             "lukasz",
		"O’Brien":            "o'brien",
		"ĲSSEL":              "ijssel",
		"Ñandú":              "nandu",
	} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
}

// benchBook builds a book of n people with US, FR and e-mail handles.
func benchBook(b *testing.B, n int) *Book {
	cards := make([]model.Contact, n)
	for i := range cards {
		cards[i] = model.Contact{Source: "vcard", ID: fmt.Sprint(i), First: fmt.Sprintf("First%d", i), Last: fmt.Sprintf("Last%d", i),
			Phones: []string{fmt.Sprintf("(415) 5%02d-%04d", i/10000, i%10000)}, Emails: []string{fmt.Sprintf("p%d@example.com", i)}}
	}
	return mustBook(b, "US", cards...)
}

// BenchmarkResolve resolves chat.db-style handles against 5,000 people:
// hits by E.164 and e-mail, and misses that fall through every tier.
func BenchmarkResolve(b *testing.B) {
	book := benchBook(b, 5000)
	handles := []string{"+14155001234", "p42@example.com", "+14155990000", "+33612345678", "+14155000001"}
	for i := 0; b.Loop(); i++ {
		book.Resolve(handles[i%len(handles)])
	}
}

func BenchmarkLookup(b *testing.B) {
	book := benchBook(b, 5000)
	for b.Loop() {
		if _, err := book.Lookup("first42", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewBook(b *testing.B) {
	for b.Loop() {
		benchBook(b, 5000)
	}
}
