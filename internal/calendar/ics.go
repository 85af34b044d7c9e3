package calendar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	data, _, err := f.fetch(ctx, icsState{})
	if err != nil {
		return nil, err
	}
	return f.parse(data)
}

func (f *ICS) parse(data []byte) (*ical.Calendar, error) {
	cal, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", f.name, err)
	}
	return cal, nil
}

// icsState is an ICS file's or URL's stored change marker: the file's
// modification time and size, or the URL's validators, and the hash of
// the text last read.
type icsState struct {
	MTime        int64  `json:"mtime,omitempty"`
	Size         int64  `json:"size,omitempty"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Hash         string `json:"hash,omitempty"`
}

// fetch reads the file or URL. With the validators of old it may answer
// nil data: the file's mtime and size are unchanged, or the URL answered
// 304 Not Modified. The returned state has the new validators (no Hash).
func (f *ICS) fetch(ctx context.Context, old icsState) ([]byte, icsState, error) {
	var data []byte
	var st icsState
	if f.ep == nil {
		fh, err := os.Open(f.path)
		if err != nil {
			return nil, st, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
		defer fh.Close()
		fi, err := fh.Stat()
		if err != nil {
			return nil, st, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
		st.MTime, st.Size = fi.ModTime().UnixNano(), fi.Size()
		if old.Hash != "" && old.MTime == st.MTime && old.Size == st.Size {
			return nil, st, nil
		}
		data, err = io.ReadAll(io.LimitReader(fh, maxObject+1))
		if err != nil {
			return nil, st, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ep.URL(), nil)
		if err != nil {
			return nil, st, err
		}
		req.Header.Set("Accept", ical.MIMEType)
		if old.Hash != "" && old.ETag != "" {
			req.Header.Set("If-None-Match", old.ETag)
		}
		if old.Hash != "" && old.LastModified != "" {
			req.Header.Set("If-Modified-Since", old.LastModified)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			return nil, st, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
		defer resp.Body.Close()
		st.ETag, st.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		if resp.StatusCode == http.StatusNotModified && old.Hash != "" {
			if st.ETag == "" {
				st.ETag = old.ETag
			}
			if st.LastModified == "" {
				st.LastModified = old.LastModified
			}
			return nil, st, nil
		}
		if resp.StatusCode != http.StatusOK {
			return nil, st, fmt.Errorf("calendar file %q: the URL answered HTTP %d", f.name, resp.StatusCode)
		}
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxObject+1))
		if err != nil {
			return nil, st, fmt.Errorf("calendar file %q: %w", f.name, err)
		}
	}
	if len(data) > maxObject {
		return nil, st, fmt.Errorf("calendar file %q is larger than %d MiB", f.name, maxObject>>20)
	}
	return data, st, nil
}

// Changes implements Syncer: an unchanged file (mtime and size) or URL
// (304 to If-None-Match / If-Modified-Since) is not read; a changed one
// whose text hashes the same is not parsed; otherwise the whole file is
// the delta, split by UID, each object's ETag the hash of its text, so
// only the objects that differ are rewritten.
func (f *ICS) Changes(ctx context.Context, c Collection, state string, _ map[string]string) (Delta, error) {
	var old icsState
	if state != "" {
		_ = json.Unmarshal([]byte(state), &old)
	}
	data, st, err := f.fetch(ctx, old)
	if err != nil {
		return Delta{}, err
	}
	if data == nil {
		st.Hash = old.Hash
		b, _ := json.Marshal(st)
		return Delta{State: string(b), Unchanged: true}, nil
	}
	sum := sha256.Sum256(data)
	st.Hash = hex.EncodeToString(sum[:])
	b, _ := json.Marshal(st)
	if st.Hash == old.Hash {
		return Delta{State: string(b), Unchanged: true}, nil
	}
	cal, err := f.parse(data)
	if err != nil {
		return Delta{}, err
	}
	d := Delta{State: string(b), Full: true}
	for _, comp := range []string{Events, Todos} {
		for _, o := range f.split(cal, comp) {
			o.ETag = hashObject(o.Cal)
			d.Upserts = append(d.Upserts, o)
		}
	}
	return d, nil
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
	return f.split(cal, comp), nil
}

// split returns the components comp of cal, one object per UID with the
// file's VTIMEZONEs.
func (f *ICS) split(cal *ical.Calendar, comp string) []Object {
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
				withHeader(o, cal)
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
	return out
}

// Put implements Backend: ICS files and URLs are read-only.
func (f *ICS) Put(context.Context, Collection, string, *ical.Calendar, Cond) (string, error) {
	return "", ErrReadOnly
}

// Get implements Backend: ICS files and URLs are not read back.
func (f *ICS) Get(context.Context, string) (Object, error) { return Object{}, ErrReadOnly }

// withHeader gives an object split from a file the file's VERSION and
// PRODID (RFC 5545 requires both; the encoder refuses a calendar without
// them).
func withHeader(o, from *ical.Calendar) {
	for _, name := range []string{ical.PropVersion, ical.PropProductID} {
		if p := from.Props.Get(name); p != nil {
			o.Props.Set(p)
		}
	}
	if o.Props.Get(ical.PropVersion) == nil {
		o.Props.SetText(ical.PropVersion, "2.0")
	}
	if o.Props.Get(ical.PropProductID) == nil {
		o.Props.SetText(ical.PropProductID, "-//Tidings//Calendar//EN")
	}
}
