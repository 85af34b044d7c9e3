package service

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// peopleSource makes the read policy person-aware: the policy files name
// handles, the address book knows which handles are one person, and
// policy.Policy.WithPeople blocks every handle of a person one of whose
// handles is blocked. Without it, blocking someone's number left the
// thread with their e-mail address readable, with their name on it.
//
// It never loads contacts itself: the gate asks for the policy while the
// index holds its locks, and a contacts load pushes cards into the index.
// The service hands it each book it loads (setBook), and a FileBook hands
// it every book it reloads, so ingestion sees the links from the first
// load on.
type peopleSource struct {
	src  PolicySource
	book atomic.Pointer[contacts.Book]

	mu   sync.Mutex
	base *policy.Policy
	bk   *contacts.Book
	out  *policy.Policy
}

// Current implements PolicySource.
func (ps *peopleSource) Current() (*policy.Policy, error) {
	p, err := ps.src.Current()
	if err != nil || p == nil {
		return p, err
	}
	b := ps.book.Load()
	if b == nil {
		return p, nil
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p != ps.base || b != ps.bk {
		people := make([][]string, 0, len(b.People()))
		for _, pp := range b.People() {
			people = append(people, handleKeys(pp))
		}
		ps.base, ps.bk, ps.out = p, b, p.WithPeople(people)
	}
	return ps.out, nil
}

// setBook hands the source the current address book.
func (ps *peopleSource) setBook(b *contacts.Book) {
	if b != nil {
		ps.book.Store(b)
	}
}

// linkPeople makes the gate's policy person-aware (once; a gate shared by
// several services keeps one source) and returns the source to feed books
// to.
func (g *Gate) linkPeople() *peopleSource {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ps, ok := g.src.(*peopleSource); ok {
		return ps
	}
	ps := &peopleSource{src: g.src}
	g.src = ps
	g.at = time.Time{} // the next read refreshes
	return ps
}
