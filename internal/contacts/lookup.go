package contacts

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/tidings-mcp/tidings/internal/model"
)

// MaxMatches is the most candidates Lookup returns (the bridge's
// contacts_lookup limit, docs/bridge.md).
const MaxMatches = 25

// MaxQueryRunes bounds a name query.
const MaxQueryRunes = 100

// Errors of Lookup and ResolveName.
var (
	ErrEmptyQuery = errors.New("contacts: empty name query")
	ErrLongQuery  = fmt.Errorf("contacts: name query longer than %d characters", MaxQueryRunes)
	ErrNoMatch    = errors.New("contacts: no contact matches")
)

// Quality ranks how well a name matched; lower is better.
type Quality int

// Match qualities, best first. Comparisons ignore case and diacritics.
const (
	QualityExact     Quality = iota // the whole name or the nickname equals the query
	QualityField                    // the first or the last name equals the query
	QualityPrefix                   // the whole name or the nickname starts with the query
	QualityWords                    // every query word starts a different word of the name
	QualitySubstring                // the query occurs inside a name field
)

func (q Quality) String() string {
	switch q {
	case QualityExact:
		return "exact"
	case QualityField:
		return "field"
	case QualityPrefix:
		return "prefix"
	case QualityWords:
		return "words"
	case QualitySubstring:
		return "substring"
	}
	return fmt.Sprintf("Quality(%d)", int(q))
}

// Match is one candidate person for a name query.
type Match struct {
	PersonID string   `json:"person_id"`
	Name     string   `json:"name"`
	Handles  []Handle `json:"handles"`
	// Phone10 is the last ten digits of the person's primary phone (the
	// bridge's phone_last10); Email is the primary e-mail, set only when the
	// person has no phone. Both are empty for a person without handles.
	Phone10 string  `json:"phone_last10,omitempty"`
	Email   string  `json:"email,omitempty"`
	Quality Quality `json:"quality"`
}

// LookupResult is the answer to a name query.
type LookupResult struct {
	Query string `json:"query"`
	// Matches holds at most MaxMatches candidates, best quality first, then
	// by name (case- and diacritic-insensitive), then by person id.
	Matches []Match `json:"matches"`
	// Total counts every matching person; Truncated is Total > len(Matches).
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// Ambiguous is true when the query does not single out one person: more
	// than one matched and no single one matched exactly.
	Ambiguous bool `json:"ambiguous"`
}

// AmbiguousError is returned by ResolveName when several people match.
type AmbiguousError struct {
	Query      string
	Candidates []Match // at most MaxMatches, best first
	Total      int
}

func (e *AmbiguousError) Error() string {
	names := make([]string, 0, 5)
	for i, m := range e.Candidates {
		if i == 5 {
			break
		}
		names = append(names, m.Name)
	}
	more := ""
	if e.Total > len(names) {
		more = fmt.Sprintf(" and %d more", e.Total-len(names))
	}
	return fmt.Sprintf("contacts: %q matches %d people (%s%s); ask which one", e.Query, e.Total, strings.Join(names, ", "), more)
}

// nameForm holds the folded name fields of one card.
type nameForm struct {
	full, first, last, nick, org string
	words                        []string
}

func newNameForm(c model.Contact) nameForm {
	f := nameForm{
		full: fold(c.Name()), first: fold(c.First), last: fold(c.Last),
		nick: fold(c.Nickname), org: fold(c.Organization),
	}
	seen := map[string]bool{}
	for _, s := range []string{f.full, f.first, f.last, f.nick, fold(c.Middle)} {
		for _, w := range splitWords(s) {
			if !seen[w] {
				seen[w] = true
				f.words = append(f.words, w)
			}
		}
	}
	return f
}

// quality returns how well query (folded) and its words match the card,
// and false when they do not.
func (f nameForm) quality(q string, qwords []string) (Quality, bool) {
	switch {
	case q == f.full || (f.nick != "" && q == f.nick):
		return QualityExact, true
	case q == f.first || q == f.last:
		return QualityField, true
	case strings.HasPrefix(f.full, q) || (f.nick != "" && strings.HasPrefix(f.nick, q)):
		return QualityPrefix, true
	case wordsMatch(qwords, f.words):
		return QualityWords, true
	}
	if strings.Contains(f.full, q) || strings.Contains(f.first, q) || strings.Contains(f.last, q) || strings.Contains(f.nick, q) {
		return QualitySubstring, true
	}
	return 0, false
}

// wordsMatch reports whether every query word is a prefix of a different
// name word (greedy; names have few words).
func wordsMatch(qwords, words []string) bool {
	if len(qwords) == 0 || len(qwords) > len(words) || len(words) > 64 {
		return false
	}
	var used uint64
	for _, q := range qwords {
		found := false
		for i, w := range words {
			if used&(1<<i) == 0 && strings.HasPrefix(w, q) {
				used |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Lookup finds the people whose full, first, last or nick name matches
// query, ignoring case and diacritics: exact names first, then first/last
// names, prefixes, word prefixes ("ang voss") and substrings. A query that
// is not a name (see queryShape) matches nobody. keep, when
// non-nil, filters people (read policy) before the MaxMatches cut, so a
// filtered result is never short of matches that were allowed.
func (b *Book) Lookup(query string, keep func(Person) bool) (LookupResult, error) {
	res := LookupResult{Query: query, Matches: []Match{}}
	q := fold(query)
	switch {
	case q == "":
		return res, ErrEmptyQuery
	case utf8.RuneCountInString(query) > MaxQueryRunes:
		return res, ErrLongQuery
	}
	named, plain := queryShape(q)
	if !named {
		return res, nil
	}
	// Word-by-word matching drops every character that is not part of a
	// word, so it is for plain queries only; any other query matches a
	// name only literally (exact, prefix, substring).
	var qwords []string
	if plain {
		qwords = splitWords(q)
	}
	type cand struct {
		m   Match
		key string
	}
	var all []cand
	exact := 0
	for pi, forms := range b.names {
		best, found := Quality(99), false
		for _, f := range forms {
			if qual, ok := f.quality(q, qwords); ok && qual < best {
				best, found = qual, true
			}
		}
		if !found {
			continue
		}
		p := b.people[pi]
		if keep != nil && !keep(p) {
			continue
		}
		if best == QualityExact {
			exact++
		}
		all = append(all, cand{newMatch(p, best), forms[0].full})
	}
	slices.SortFunc(all, func(x, y cand) int {
		return cmp.Or(cmp.Compare(x.m.Quality, y.m.Quality), cmp.Compare(x.key, y.key),
			cmp.Compare(x.m.Name, y.m.Name), cmp.Compare(x.m.PersonID, y.m.PersonID))
	})
	res.Total = len(all)
	res.Ambiguous = res.Total > 1 && exact != 1
	if len(all) > MaxMatches {
		all, res.Truncated = all[:MaxMatches], true
	}
	for _, c := range all {
		res.Matches = append(res.Matches, c.m)
	}
	return res, nil
}

func newMatch(p Person, q Quality) Match {
	m := Match{PersonID: p.ID, Name: p.Name, Handles: p.Handles, Quality: q}
	if h, ok := p.Primary(); ok {
		switch h.Kind {
		case KindEmail:
			m.Email = h.Key
		default:
			m.Phone10 = h.Last10
		}
	}
	return m
}

// ResolveName returns the one person a name designates: the only match,
// or the only exact match. Several candidates give an *AmbiguousError
// listing them (never a guess); none gives ErrNoMatch.
func (b *Book) ResolveName(query string, keep func(Person) bool) (Person, error) {
	res, err := b.Lookup(query, keep)
	if err != nil {
		return Person{}, err
	}
	switch {
	case res.Total == 0:
		return Person{}, fmt.Errorf("%w %q", ErrNoMatch, query)
	case !res.Ambiguous:
		p, _ := b.Person(res.Matches[0].PersonID)
		return p, nil
	}
	return Person{}, &AmbiguousError{Query: query, Candidates: res.Matches, Total: res.Total}
}

// fold lower-cases s, removes diacritics ("Zoë" → "zoe", "Müller" →
// "muller"), expands compatibility forms (ligatures, full-width letters), maps letters without a decomposition (ß, æ, ø, ł, œ, đ, ı) and
// typographic apostrophes to ASCII, and collapses white space.
func fold(s string) string {
	if s == "" {
		return ""
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		s = norm.NFKD.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := true // drop leading space
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		space = false
		switch r {
		case 'ß', 'ẞ':
			b.WriteString("ss")
		case 'æ', 'Æ':
			b.WriteString("ae")
		case 'œ', 'Œ':
			b.WriteString("oe")
		case 'ø', 'Ø':
			b.WriteByte('o')
		case 'ł', 'Ł':
			b.WriteByte('l')
		case 'đ', 'Đ':
			b.WriteByte('d')
		case 'ı':
			b.WriteByte('i')
		case '\u2018', '\u2019', '\u02bc', '`', '\u00b4':
			b.WriteByte('\'')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// queryShape says what a folded name query is. named: it has a letter, a
// digit or a symbol (an emoji nickname), so it can name someone; a query
// of punctuation alone ("-", "'", "%", "_") is no name and matches nobody,
// not every name that happens to contain it. plain: besides words it holds
// only what names are written with (spaces, apostrophes, hyphens, periods,
// commas), so splitting it into words loses nothing. `" OR ""="` is not
// plain: word by word it would be "or" and select an "Ortega".
func queryShape(q string) (named, plain bool) {
	plain = true
	for _, r := range q {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			named = true
		case unicode.Is(unicode.So, r):
			named, plain = true, false
		case r == ' ' || r == '\'' || r == '-' || r == '.' || r == ',' || unicode.Is(unicode.Mn, r):
		default:
			plain = false
		}
	}
	return named, plain
}

// splitWords splits a folded name into words at anything that is not a
// letter, digit or apostrophe ("jean-luc o'neil" → jean, luc, o'neil).
func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}
