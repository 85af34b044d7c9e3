package contacts

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Handle is one normalised way to reach a person.
type Handle struct {
	// Key is the normalised form (see Normalize): E.164, lower-case e-mail,
	// short code digits, alphanumeric id.
	Key  string `json:"key"`
	Kind Kind   `json:"kind"`
	// Raw is the handle as typed on the newest card that has it.
	Raw string `json:"raw"`
	// Last10 is the last-ten-digits form (docs/contacts.md, "Handles") of a
	// phone or short code; empty for e-mail and alphanumeric ids.
	Last10 string `json:"last10,omitempty"`
	// national is the national number used by the ByNational tier.
	national string
}

// CardRef identifies one card a person was built from.
type CardRef struct {
	Source   string    `json:"source"`
	ID       string    `json:"id"`
	Name     string    `json:"name,omitempty"`
	Modified time.Time `json:"modified,omitzero"`
}

// Person is one human (or business) after duplicate cards were merged.
// Values returned by a Book share its slices and must not be modified.
type Person struct {
	// ID is stable across rebuilds: a digest of the person's lowest card
	// reference (source + card id), so it survives edits to names and
	// numbers and changes only if that card is deleted or a card that sorts
	// lower is merged in.
	ID string `json:"id"`
	// Name is the display name of the most recently modified card that has
	// one; First, Last, Nickname and Organization come from that card.
	Name         string `json:"name"`
	First        string `json:"first,omitempty"`
	Last         string `json:"last,omitempty"`
	Nickname     string `json:"nickname,omitempty"`
	Organization string `json:"organization,omitempty"`
	// AlsoKnownAs lists the other names the merged cards carry, newest
	// first. NameConflict is true when there are any: the cards disagree,
	// which is either a renamed contact (the newest name is right) or two
	// people sharing one number or address.
	AlsoKnownAs  []string `json:"also_known_as,omitempty"`
	NameConflict bool     `json:"name_conflict,omitempty"`
	// Handles are every handle of every merged card, deduplicated by key:
	// the newest card's first, in its order (mobile phones first).
	Handles []Handle `json:"handles"`
	// Cards are the source cards, newest first.
	Cards    []CardRef `json:"cards"`
	Modified time.Time `json:"modified,omitzero"`
}

// Primary returns the handle the bridge's contacts_lookup reports for the
// person: the first phone, else the first e-mail, else the first other
// handle. ok is false for a person without handles.
func (p Person) Primary() (Handle, bool) {
	for _, kind := range []Kind{KindPhone, KindEmail} {
		for _, h := range p.Handles {
			if h.Kind == kind {
				return h, true
			}
		}
	}
	if len(p.Handles) > 0 {
		return p.Handles[0], true
	}
	return Handle{}, false
}

// MatchBy says how a handle was resolved.
type MatchBy string

// Resolution tiers, tried in this order.
const (
	ByKey      MatchBy = "key"      // same normalised key (E.164, e-mail, short code, sender id)
	ByLast10   MatchBy = "last10"   // same last ten digits (docs/contacts.md)
	ByNational MatchBy = "national" // same national number; one side had no country code
)

// Resolution is the detailed answer of ResolveHandle.
type Resolution struct {
	Found  bool
	Person Person
	By     MatchBy
	// Ambiguous lists the person ids that matched equally well when more
	// than one did; Found is then false. A handle is never guessed.
	Ambiguous []string
}

// BookStats counts what a Book was built from.
type BookStats struct {
	Cards   int `json:"cards"`
	People  int `json:"people"`
	Handles int `json:"handles"`
	// Merged is the number of people built from more than one card.
	Merged int `json:"merged"`
}

// Book resolves handles to people and names to candidates. It is
// immutable once built and safe for concurrent use.
type Book struct {
	region string
	people []Person // sorted by ID
	byID   map[string]int
	byKey  map[string]int
	// Fallback indexes: last ten digits of every phone key with at least ten
	// digits; national numbers of E.164 keys and of keys without a country.
	byLast10       map[string][]int
	byNationalE164 map[string][]int
	byNationalBare map[string][]int
	names          [][]nameForm // per person, one entry per named card
	stats          BookStats
}

// minNational is the shortest national number used for matching: shorter
// ones are too likely to collide.
const minNational = 7

// NewBook merges cards from any number of sources into people. region is
// the default region for numbers typed without a country code (empty means
// DefaultRegion); an unknown region is an error.
//
// Cards that share a normalised handle (phone, e-mail) or the same
// source+id are one person (union-find). The person's name is that of the
// most recently modified card with a name; ties go to the lower
// source+id, so the result never depends on input order.
func NewBook(cards []model.Contact, region string) (*Book, error) {
	region = canonRegion(region)
	if !ValidRegion(region) {
		return nil, fmt.Errorf("contacts: unknown region %q (want a two-letter code such as US, FR, DE)", region)
	}
	b := &Book{
		region: region, byID: map[string]int{}, byKey: map[string]int{},
		byLast10: map[string][]int{}, byNationalE164: map[string][]int{}, byNationalBare: map[string][]int{},
	}
	b.stats.Cards = len(cards)

	// Normalise every card's handles once.
	type cardHandle struct {
		norm normalized
		raw  string
	}
	handles := make([][]cardHandle, len(cards))
	for i, c := range cards {
		for _, raw := range c.Phones {
			if n := normalize(raw, region); n.kind != KindInvalid && n.kind != KindEmail {
				handles[i] = append(handles[i], cardHandle{n, raw})
			}
		}
		for _, raw := range c.Emails {
			if n := normalize(raw, region); n.kind == KindEmail {
				handles[i] = append(handles[i], cardHandle{n, raw})
			}
		}
	}

	// Union cards sharing a key or a card reference.
	uf := newUnionFind(len(cards))
	owner := map[string]int{}
	link := func(key string, i int) {
		if j, ok := owner[key]; ok {
			uf.union(i, j)
		} else {
			owner[key] = i
		}
	}
	for i, c := range cards {
		link("\x00ref\x00"+c.Source+"\x00"+c.ID, i)
		for _, h := range handles[i] {
			link(h.norm.key, i)
		}
	}
	groups := make(map[int][]int, len(cards))
	for i := range cards {
		r := uf.find(i)
		groups[r] = append(groups[r], i)
	}

	b.people = make([]Person, 0, len(groups))
	b.names = make([][]nameForm, 0, len(groups))
	for _, members := range groups {
		// Newest first; ties by source, then id (deterministic).
		slices.SortFunc(members, func(x, y int) int {
			a, c := cards[x], cards[y]
			if d := b2i(c.Modified.After(a.Modified)) - b2i(a.Modified.After(c.Modified)); d != 0 {
				return d
			}
			return cmp.Or(cmp.Compare(a.Source, c.Source), cmp.Compare(a.ID, c.ID))
		})
		var p Person
		minRef := ""
		seenName := map[string]bool{}
		seenKey := map[string]bool{}
		var forms []nameForm
		for _, i := range members {
			c := cards[i]
			name := c.Name()
			ref := c.Source + "\x00" + c.ID
			if minRef == "" || ref < minRef {
				minRef = ref
			}
			p.Cards = append(p.Cards, CardRef{Source: c.Source, ID: c.ID, Name: name, Modified: c.Modified})
			if c.Modified.After(p.Modified) {
				p.Modified = c.Modified
			}
			if name != "" {
				folded := fold(name)
				switch {
				case p.Name == "":
					p.Name, p.First, p.Last, p.Nickname, p.Organization = name, c.First, c.Last, c.Nickname, c.Organization
					seenName[folded] = true
				case !seenName[folded]:
					seenName[folded] = true
					p.AlsoKnownAs = append(p.AlsoKnownAs, name)
				}
				forms = append(forms, newNameForm(c))
			}
			for _, h := range handles[i] {
				if seenKey[h.norm.key] {
					continue
				}
				seenKey[h.norm.key] = true
				hd := Handle{Key: h.norm.key, Kind: h.norm.kind, Raw: h.raw, national: h.norm.national}
				if h.norm.kind == KindPhone || h.norm.kind == KindShortCode {
					hd.Last10 = Last10(h.norm.key)
				}
				p.Handles = append(p.Handles, hd)
			}
		}
		p.NameConflict = len(p.AlsoKnownAs) > 0
		sum := sha256.Sum256([]byte(minRef))
		p.ID = "p" + hex.EncodeToString(sum[:8])
		b.people = append(b.people, p)
		b.names = append(b.names, forms)
		if len(members) > 1 {
			b.stats.Merged++
		}
	}

	// Sort people by id, keeping names aligned.
	order := make([]int, len(b.people))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(b.people[x].ID, b.people[y].ID) })
	people, names := make([]Person, len(order)), make([][]nameForm, len(order))
	for to, from := range order {
		people[to], names[to] = b.people[from], b.names[from]
	}
	b.people, b.names = people, names

	for pi, p := range b.people {
		b.byID[p.ID] = pi
		for _, h := range p.Handles {
			b.byKey[h.Key] = pi
			b.stats.Handles++
			if h.Kind != KindPhone {
				continue
			}
			if len(h.Last10) == 10 {
				b.byLast10[h.Last10] = appendUnique(b.byLast10[h.Last10], pi)
			}
			if len(h.national) >= minNational {
				if strings.HasPrefix(h.Key, "+") {
					b.byNationalE164[h.national] = appendUnique(b.byNationalE164[h.national], pi)
				} else {
					b.byNationalBare[h.national] = appendUnique(b.byNationalBare[h.national], pi)
				}
			}
		}
	}
	b.stats.People = len(b.people)
	return b, nil
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func appendUnique(s []int, v int) []int {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// Region returns the default region the book normalises with.
func (b *Book) Region() string { return b.region }

// Stats returns counts of cards, people and handles.
func (b *Book) Stats() BookStats { return b.stats }

// People returns every person, sorted by ID. The slice is shared.
func (b *Book) People() []Person { return b.people }

// Person returns the person with the given ID.
func (b *Book) Person(id string) (Person, bool) {
	i, ok := b.byID[id]
	if !ok {
		return Person{}, false
	}
	return b.people[i], true
}

// Resolve returns the person a handle (as stored in chat.db, typed by a
// user, or read from a card) belongs to. It is false when no card has the
// handle or when several people match equally (see ResolveHandle).
func (b *Book) Resolve(handle string) (Person, bool) {
	r := b.ResolveHandle(handle)
	return r.Person, r.Found
}

// DisplayName returns the name to show for a handle, or "" when the handle
// resolves to no one (callers then show the handle itself).
func (b *Book) DisplayName(handle string) string {
	if p, ok := b.Resolve(handle); ok {
		return p.Name
	}
	return ""
}

// ResolveHandle resolves a handle in tiers: the exact normalised key
// (E.164 first); then, for phones, the last ten digits (docs/contacts.md;
// only for numbers of at least ten digits); then the national number when
// one side was typed without a country code ("06 12 34 56 78" on a card,
// +33612345678 in chat.db, region US). The first tier with any match
// decides: one person is found, several are reported as ambiguous.
func (b *Book) ResolveHandle(handle string) Resolution {
	n := normalize(handle, b.region)
	if n.kind == KindInvalid {
		return Resolution{}
	}
	if i, ok := b.byKey[n.key]; ok {
		return Resolution{Found: true, Person: b.people[i], By: ByKey}
	}
	if n.kind != KindPhone {
		return Resolution{}
	}
	if l := Last10(n.key); len(l) == 10 {
		if r, ok := b.pick(b.byLast10[l], ByLast10); ok {
			return r
		}
	}
	if len(n.national) >= minNational {
		idx := b.byNationalBare[n.national]
		if !n.e164() {
			idx = b.byNationalE164[n.national]
		}
		if r, ok := b.pick(idx, ByNational); ok {
			return r
		}
	}
	return Resolution{}
}

// pick turns the candidates of one tier into a resolution; ok is false
// when the tier had none.
func (b *Book) pick(idx []int, by MatchBy) (Resolution, bool) {
	switch len(idx) {
	case 0:
		return Resolution{}, false
	case 1:
		return Resolution{Found: true, Person: b.people[idx[0]], By: by}, true
	}
	ids := make([]string, len(idx))
	for i, pi := range idx {
		ids[i] = b.people[pi].ID
	}
	slices.Sort(ids)
	return Resolution{By: by, Ambiguous: ids}, true
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct{ parent, size []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = i, 1
	}
	return u
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}
