package calendar

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/scope"
)

// Store is every configured backend in the user's zone, with the read
// policy's question about people: what the tools of both services ask.
type Store struct {
	Backends []Backend
	// Loc is the user's zone (the shared timezone setting).
	Loc *time.Location
	// Now is the configuration's clock.
	Now func() time.Time
	// Blocked reports whether the read policy blocks a person's address;
	// an error (no policy can be loaded) hides every event with people
	// other than the user (fail closed). Nil = nobody is blocked.
	Blocked func(addr string) (bool, error)
	// Self lists the user's own addresses (the accounts' usernames), which
	// never hide an event.
	Self []string
	// SearchPath is the calendar search store's file (sync.go;
	// calendar.db in the Tidings home); "" = no search.
	SearchPath string
}

// Listed is the collections of every backend holding one component, and
// a sentence per backend that could not be read.
type Listed struct {
	Collections []Collection
	Problems    []string
}

// Collections lists the collections holding comp. A backend that fails is
// named in Problems and the others are still listed; when every backend
// fails the first error is returned, because an empty list would claim
// there is nothing.
func (s *Store) Collections(ctx context.Context, comp string) (Listed, error) {
	var out Listed
	var firstErr error
	for _, b := range s.Backends {
		cols, err := b.Collections(ctx)
		if err != nil {
			out.Problems = append(out.Problems, err.Error())
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, c := range cols {
			if c.Holds(comp) {
				out.Collections = append(out.Collections, c)
			}
		}
	}
	if len(out.Collections) == 0 && firstErr != nil {
		return out, firstErr
	}
	return out, nil
}

// Rows returns the scope rows of collections, in order (scope.ScopedRows
// answers with their indices).
func Rows(cols []Collection) []scope.Row {
	rows := make([]scope.Row, len(cols))
	for i, c := range cols {
		rows[i] = scope.Row{Account: c.Account, Name: c.Name, ID: c.Href}
	}
	return rows
}

// Path is a collection's Account/Name path.
func (c Collection) Path() string { return c.Account + "/" + c.Name }

func (s *Store) backend(account string) (Backend, error) {
	for _, b := range s.Backends {
		if b.Account() == account {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no calendar account %q", account)
}

// Event is an occurrence with the collection it came from.
type Event struct {
	Occurrence
	Calendar Collection
}

// EventsResult is what Events found.
type EventsResult struct {
	Events []Event
	// Hidden counts events hidden because the read policy blocks a person
	// on them (never which, nor who).
	Hidden   int
	Cut      bool
	Problems []string
}

// Events expands the events of cols that overlap [from, to), sorted by
// start, hiding those whose organizer or any attendee other than the user
// the read policy blocks (docs/security.md, "Calendar and Reminders").
func (s *Store) Events(ctx context.Context, cols []Collection, from, to time.Time) (EventsResult, error) {
	var res EventsResult
	x := Expander{Loc: s.Loc}
	var firstErr error
	failed := 0
	for _, c := range cols {
		b, err := s.backend(c.Account)
		if err != nil {
			return res, err
		}
		objs, err := b.Objects(ctx, c, Events)
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, o := range objs {
			r, err := x.Expand(o.Cal, from, to)
			if err != nil {
				res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", c.Path(), err))
				continue
			}
			res.Cut = res.Cut || r.Cut
			if o.Problem != "" && (len(r.Occurrences) > 0 || x.startsBefore(o.Cal, to)) {
				res.Problems = append(res.Problems, fmt.Sprintf("%s: %s", c.Path(), o.Problem))
			}
			for _, occ := range r.Occurrences {
				if s.hidden(occ) {
					res.Hidden++
					continue
				}
				res.Events = append(res.Events, Event{Occurrence: occ, Calendar: c})
			}
		}
	}
	if failed > 0 && failed == len(cols) {
		return res, firstErr
	}
	sortEvents(res.Events)
	return res, nil
}

// sortEvents orders events by start, then title.
func sortEvents(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i], ev[j]
		if !a.Start.Time.Equal(b.Start.Time) {
			return a.Start.Time.Before(b.Start.Time)
		}
		return a.Title < b.Title
	})
}

// hidden applies the read policy to the people of an occurrence.
func (s *Store) hidden(o Occurrence) bool {
	if s.Blocked == nil {
		return false
	}
	var people []string
	if o.Organizer != nil {
		people = append(people, o.Organizer.Address)
	}
	for _, a := range o.Attendees {
		people = append(people, a.Address)
	}
	for _, p := range people {
		if p == "" || s.isSelf(p) {
			continue
		}
		blocked, err := s.Blocked(p)
		if err != nil || blocked {
			return true
		}
	}
	return false
}

func (s *Store) isSelf(addr string) bool {
	for _, me := range s.Self {
		if strings.EqualFold(strings.TrimSpace(me), strings.TrimSpace(addr)) {
			return true
		}
	}
	return false
}

// TodoItem is a to-do with the list it is on and the object it lives in.
type TodoItem struct {
	Todo
	List Collection
	Href string
	ETag string
}

// Todos returns the to-dos of cols.
func (s *Store) Todos(ctx context.Context, cols []Collection) ([]TodoItem, []string, error) {
	x := Expander{Loc: s.Loc}
	var out []TodoItem
	var problems []string
	var firstErr error
	failed := 0
	for _, c := range cols {
		b, err := s.backend(c.Account)
		if err != nil {
			return nil, nil, err
		}
		objs, err := b.Objects(ctx, c, Todos)
		if err != nil {
			problems = append(problems, err.Error())
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, o := range objs {
			for _, t := range x.Todos(o.Cal) {
				out = append(out, TodoItem{Todo: t, List: c, Href: o.Href, ETag: o.ETag})
			}
		}
	}
	if failed > 0 && failed == len(cols) {
		return nil, problems, firstErr
	}
	return out, problems, nil
}

// NewUID returns a fresh random UID for a new event or to-do.
func NewUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x@tidings", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// errWindow is returned for a window that ends before it starts.
var errWindow = errors.New("date_to must not be before date_from")

// maxWindow bounds how far one listing expands.
const maxWindow = 366 * 24 * time.Hour

// Window parses date_from and date_to in the user's zone: a date alone
// ("2026-03-02") is that whole day, so date_to's day is included; a
// date-time without an offset is read in the user's zone; RFC 3339 with an
// offset is that instant. Defaults: from the start of today, for 7 days.
func Window(fromText, toText string, now time.Time, loc *time.Location) (time.Time, time.Time, error) {
	today := time.Date(now.In(loc).Year(), now.In(loc).Month(), now.In(loc).Day(), 0, 0, 0, 0, loc)
	from, to := today, time.Time{}
	if strings.TrimSpace(fromText) != "" {
		t, _, err := ParseWhen("date_from", fromText, loc)
		if err != nil {
			return from, to, err
		}
		from = t
	}
	if strings.TrimSpace(toText) != "" {
		t, dateOnly, err := ParseWhen("date_to", toText, loc)
		if err != nil {
			return from, to, err
		}
		if dateOnly {
			t = t.AddDate(0, 0, 1)
		}
		to = t
	} else {
		to = from.AddDate(0, 0, 7)
	}
	if to.Before(from) {
		return from, to, errWindow
	}
	if to.Sub(from) > maxWindow {
		return from, to, fmt.Errorf("the window from date_from to date_to is longer than 366 days: ask for a shorter one")
	}
	return from, to, nil
}

// ParseWhen parses an ISO-8601 date or date-time for parameter name, in
// loc when it carries no offset; dateOnly reports a date alone.
func ParseWhen(name, s string, loc *time.Location) (t time.Time, dateOnly bool, err error) {
	s = strings.TrimSpace(s)
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, true, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, false, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, false, nil
		}
	}
	q := s
	if len(q) > 40 {
		q = q[:40] + "…"
	}
	return time.Time{}, false, fmt.Errorf("%s must be an ISO-8601 date (2026-03-02) or date-time (2026-03-02T09:30, optionally with an offset), not %q", name, q)
}
