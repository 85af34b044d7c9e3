// Package calendar is the Calendar and Reminders services of seed 002
// (docs/tools.md, "Calendar" and "Reminders"): CalDAV accounts
// ([[calendar.accounts]]) and read-only ICS files and URLs
// ([[calendar.files]]) behind the small Backend interface, the recurrence
// expansion of expand.go, and the six tools in tools.go and
// reminders.go. Only the tool files import internal/mcpserver; the
// backends and the expansion are tested on their own.
package calendar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/emersion/go-ical"
)

// Component names a collection may hold.
const (
	Events = ical.CompEvent // "VEVENT"
	Todos  = ical.CompToDo  // "VTODO"
)

// Collection is one calendar or reminder list of a backend.
type Collection struct {
	// Account is the [[calendar.accounts]] or [[calendar.files]] name:
	// the account half of the Account/Name path.
	Account string
	// Name is the collection's display name (the server's, third-party
	// text); for an ICS file, the file's configured name.
	Name string
	// Href identifies the collection on its backend (a path on the
	// server, or the file); opaque outside the backend.
	Href string
	// Components lists what it holds (VEVENT, VTODO); empty = both.
	Components []string
	// ReadOnly is true for ICS files and URLs.
	ReadOnly bool
}

// Holds reports whether the collection may hold component comp.
func (c Collection) Holds(comp string) bool {
	return len(c.Components) == 0 || slices.Contains(c.Components, comp)
}

// Object is one calendar resource: a VCALENDAR with its ETag.
type Object struct {
	Href string
	ETag string
	Cal  *ical.Calendar
	// Problem is set by a backend that converted the object only in part
	// (the Mac's Calendar store: a recurrence it does not understand, the
	// event then shown once); Events reports it when the object has an
	// occurrence in the window. It never comes from the object's text, so
	// a calendar cannot forge it.
	Problem string
}

// Cond is the precondition of a write (RFC 7232): IfNoneMatch for a new
// resource ("*": fail when the name is taken), IfMatch with the ETag the
// writer read (fail when someone changed it since).
type Cond struct {
	IfNoneMatch bool
	IfMatch     string
}

// ErrReadOnly is returned by writes to an ICS file or URL.
var ErrReadOnly = errors.New("this calendar is a read-only ICS file or URL")

// ErrPrecondition is returned by Put when its Cond failed (HTTP 412): the
// resource exists (IfNoneMatch) or changed since it was read (IfMatch).
var ErrPrecondition = errors.New("the calendar server refused the write because the item changed or already exists; read it again and retry")

// Backend is one account or file.
type Backend interface {
	// Account is the configured name.
	Account() string
	// Kind is "caldav", "ics-file" or "ics-url".
	Kind() string
	// Collections lists the backend's calendars and lists.
	Collections(ctx context.Context) ([]Collection, error)
	// Objects returns every object of a collection that holds comp.
	Objects(ctx context.Context, c Collection, comp string) ([]Object, error)
	// Put writes cal as resource name (a file name such as "uid.ics") in
	// c under cond, and returns the written object's href.
	Put(ctx context.Context, c Collection, name string, cal *ical.Calendar, cond Cond) (string, error)
	// Get reads one object back.
	Get(ctx context.Context, href string) (Object, error)
}

// Addresser is implemented by backends that know the user's own address
// on their account: the ORGANIZER of the events created there with
// attendees (RFC 5545 §3.8.4.3; RFC 6638 §3.1 needs one to schedule).
type Addresser interface {
	Address() string
}

// encode renders a calendar as iCalendar text.
func encode(cal *ical.Calendar) ([]byte, error) {
	var b bytes.Buffer
	if err := ical.NewEncoder(&b).Encode(cal); err != nil {
		return nil, fmt.Errorf("encode iCalendar: %w", err)
	}
	return b.Bytes(), nil
}

// maxObject bounds what one ICS file, URL or CalDAV response may hold.
const maxObject = 16 << 20

// decode parses iCalendar text holding one or more VCALENDARs (an ICS
// file may concatenate them) into one calendar.
func decode(data []byte) (*ical.Calendar, error) {
	dec := ical.NewDecoder(bytes.NewReader(data))
	var out *ical.Calendar
	for {
		cal, err := dec.Decode()
		if errors.Is(err, io.EOF) && out != nil {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parse iCalendar: %w", err)
		}
		if out == nil {
			out = cal
		} else {
			out.Children = append(out.Children, cal.Children...)
		}
	}
}
