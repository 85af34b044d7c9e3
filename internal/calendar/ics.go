package calendar

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/emersion/go-ical"

	"github.com/tidings-mcp/tidings/internal/account"
)

// ICS is a read-only [[calendar.files]] entry: an .ics file on disk or an
// ICS subscription URL. It is one collection named after the entry (its
// path is "name/name"), holding whatever components the file has; it is
// read on every call (a file is small and the user may edit it).
type ICS struct {
	name, path string
	ep         *account.Endpoint
	hc         *http.Client
}

// NewICSFile returns the backend of an ICS file.
func NewICSFile(name, path string) *ICS { return &ICS{name: name, path: path} }

// NewICSURL returns the backend of an ICS URL (the URL rule of
// internal/account: https, or http to loopback only).
func NewICSURL(name, raw string) (*ICS, error) {
	ep, err := account.ParseEndpoint(raw, account.HTTP)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: url: %w", name, err)
	}
	hc, err := newHTTPClient(ep, "")
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", name, err)
	}
	return &ICS{name: name, ep: &ep, hc: hc}, nil
}

// Account implements Backend.
func (f *ICS) Account() string { return f.name }

// Kind implements Backend.
func (f *ICS) Kind() string {
	if f.ep != nil {
		return "ics-url"
	}
	return "ics-file"
}

// Location is the file or URL, for status.
func (f *ICS) Location() string {
	if f.ep != nil {
		return f.ep.URL()
	}
	return f.path
}

func (f *ICS) read(ctx context.Context) (*ical.Calendar, error) {
	var data []byte
	if f.ep == nil {
		fh, err := os.Open(f.path)
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
		defer fh.Close()
		data, err = io.ReadAll(io.LimitReader(fh, maxObject+1))
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ep.URL(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", ical.MIMEType)
		resp, err := f.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("calendar file %q: the URL answered HTTP %d", f.name, resp.StatusCode)
		}
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxObject+1))
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
	}
	if len(data) > maxObject {
		return nil, fmt.Errorf("calendar file %q is larger than %d MiB", f.name, maxObject>>20)
	}
	cal, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
	}
	return cal, nil
}

// Collections implements Backend: the file itself, holding the
// components it has.
func (f *ICS) Collections(ctx context.Context) ([]Collection, error) {
	cal, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	var comps []string
	for _, c := range cal.Children {
		if (c.Name == Events || c.Name == Todos) && !contains(comps, c.Name) {
			comps = append(comps, c.Name)
		}
	}
	if comps == nil {
		comps = []string{Events}
	}
	return []Collection{{Account: f.name, Name: f.name, Href: f.Location(), Components: comps, ReadOnly: true}}, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Objects implements Backend: the file split into one object per UID, as
// a CalDAV server would hold it (an override travels with its series).
func (f *ICS) Objects(ctx context.Context, _ Collection, comp string) ([]Object, error) {
	cal, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	var zones []*ical.Component
	byUID := map[string]*ical.Calendar{}
	var order []string
	for _, c := range cal.Children {
		switch c.Name {
		case ical.CompTimezone:
			zones = append(zones, c)
		case comp:
			uid := propText(c, ical.PropUID)
			o, ok := byUID[uid]
			if !ok {
				o = ical.NewCalendar()
				byUID[uid] = o
				order = append(order, uid)
			}
			o.Children = append(o.Children, c)
		}
	}
	out := make([]Object, 0, len(order))
	for _, uid := range order {
		o := byUID[uid]
		o.Children = append(append([]*ical.Component{}, zones...), o.Children...)
		out = append(out, Object{Href: f.Location() + "#" + uid, Cal: o})
	}
	return out, nil
}

// Put implements Backend: ICS files and URLs are read-only.
func (f *ICS) Put(context.Context, Collection, string, *ical.Calendar, Cond) (string, error) {
	return "", ErrReadOnly
}

// Get implements Backend: ICS files and URLs are not read back.
func (f *ICS) Get(context.Context, string) (Object, error) { return Object{}, ErrReadOnly }
