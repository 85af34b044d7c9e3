package calendar

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"
)

// CalDAV's side of the sync (sync.go). go-webdav v0.6's caldav client has
// no sync-collection REPORT (only its carddav client does), so the three
// requests are built here:
//
//  1. PROPFIND Depth 0 for the collection's getctag (CalendarServer's
//     extension, which Radicale, Nextcloud, iCloud and others serve) and
//     DAV:sync-token (RFC 6578); an unchanged ctag ends the sync of that
//     collection with one request;
//  2. with a stored sync-token: REPORT sync-collection (RFC 6578 §3.2),
//     which names the members changed or removed since; a server that
//     refuses the token (it expired) falls back to 3;
//  3. otherwise PROPFIND Depth 1 for every member's getetag, diffed with
//     the stored ETags.
//
// The changed members are then fetched with calendar-multiget (RFC 4791
// §7.9), at most multigetBatch per request.

const multigetBatch = 100

// davState is a CalDAV collection's stored change marker.
type davState struct {
	CTag  string `json:"ctag,omitempty"`
	Token string `json:"token,omitempty"`
}

type davProp struct {
	ETag         string `xml:"DAV: getetag"`
	CTag         string `xml:"http://calendarserver.org/ns/ getctag"`
	SyncToken    string `xml:"DAV: sync-token"`
	ResourceType struct {
		Collection *struct{} `xml:"DAV: collection"`
	} `xml:"DAV: resourcetype"`
}

type davResponse struct {
	Href     []string `xml:"DAV: href"`
	Status   string   `xml:"DAV: status"`
	Propstat []struct {
		Status string  `xml:"DAV: status"`
		Prop   davProp `xml:"DAV: prop"`
	} `xml:"DAV: propstat"`
}

type davMultistatus struct {
	Responses []davResponse `xml:"DAV: response"`
	SyncToken string        `xml:"DAV: sync-token"`
}

// prop is the first propstat with a 2xx status.
func (r davResponse) prop() (davProp, bool) {
	for _, ps := range r.Propstat {
		if statusOK(ps.Status) {
			return ps.Prop, true
		}
	}
	return davProp{}, false
}

// statusOK reads "HTTP/1.1 200 OK"; an absent status counts as OK.
func statusOK(s string) bool {
	f := strings.Fields(s)
	return len(f) < 2 || strings.HasPrefix(f[1], "2")
}

// hrefPath is an href as a decoded path, the form go-webdav's objects
// carry, so hrefs from both sides compare equal.
func hrefPath(h string) string {
	u, err := url.Parse(strings.TrimSpace(h))
	if err != nil {
		return h
	}
	return u.Path
}

// davRequest sends a WebDAV request with an XML body and decodes the
// 207 multistatus.
func (d *CalDAV) davRequest(ctx context.Context, method, href, depth, body string) (*davMultistatus, error) {
	_, home, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	u := home.ResolveReference(&url.URL{Path: href})
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	req.Header.Set("Depth", depth)
	resp, err := authed(d).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxObject+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusMultiStatus {
		return nil, statusError(resp.StatusCode)
	}
	if len(data) > maxObject {
		return nil, fmt.Errorf("the server's answer is larger than %d MiB", maxObject>>20)
	}
	var ms davMultistatus
	if err := xml.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("parse the server's multistatus: %w", err)
	}
	return &ms, nil
}

const (
	propfindMarkers = `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>`
	propfindETags   = `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>`
)

func syncCollectionBody(token string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>`)
	_ = xml.EscapeText(&b, []byte(token))
	b.WriteString(`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`)
	return b.String()
}

// Changes implements Syncer.
func (d *CalDAV) Changes(ctx context.Context, c Collection, state string, known map[string]string) (Delta, error) {
	var old davState
	if state != "" {
		_ = json.Unmarshal([]byte(state), &old) // an unreadable state is a first sync
	}
	fail := func(what string, err error) (Delta, error) {
		return Delta{}, fmt.Errorf("calendar account %q: sync %q: %s: %w", d.cfg.Account, c.Name, what, d.plain(err))
	}
	ms, err := d.davRequest(ctx, "PROPFIND", c.Href, "0", propfindMarkers)
	if err != nil {
		return fail("read its change marker", err)
	}
	var now davState
	for _, r := range ms.Responses {
		if p, ok := r.prop(); ok {
			now.CTag, now.Token = p.CTag, p.SyncToken
		}
	}
	newState, _ := json.Marshal(now)
	if now.CTag != "" && now.CTag == old.CTag && old.Token == now.Token {
		return Delta{State: string(newState), Unchanged: true}, nil
	}
	var changed, deleted []string
	viaToken := false
	if old.Token != "" && now.Token != "" {
		ms, err := d.davRequest(ctx, "REPORT", c.Href, "1", syncCollectionBody(old.Token))
		if err == nil {
			viaToken = true
			self := hrefPath(c.Href)
			for _, r := range ms.Responses {
				for _, h := range r.Href {
					h = hrefPath(h)
					if strings.TrimSuffix(h, "/") == strings.TrimSuffix(self, "/") {
						continue
					}
					if !statusOK(r.Status) {
						deleted = append(deleted, h) // RFC 6578 §3.5.2: 404 for a removed member
						continue
					}
					if p, ok := r.prop(); ok && p.ETag != "" && strings.Trim(p.ETag, `"`) == known[h] {
						continue
					}
					changed = append(changed, h)
				}
			}
			if ms.SyncToken != "" {
				now.Token = ms.SyncToken
				newState, _ = json.Marshal(now)
			}
		} else if ctx.Err() != nil {
			return Delta{}, ctx.Err()
		}
		// Any other failure (403/409 valid-sync-token: the token expired)
		// falls back to the ETag listing.
	}
	if !viaToken {
		ms, err := d.davRequest(ctx, "PROPFIND", c.Href, "1", propfindETags)
		if err != nil {
			return fail("list its items", err)
		}
		listed := map[string]bool{}
		for _, r := range ms.Responses {
			p, ok := r.prop()
			if !ok || p.ResourceType.Collection != nil || len(r.Href) == 0 {
				continue
			}
			h := hrefPath(r.Href[0])
			listed[h] = true
			if e, ok := known[h]; ok && e == strings.Trim(p.ETag, `"`) && e != "" {
				continue
			}
			changed = append(changed, h)
		}
		for h := range known {
			if !listed[h] {
				deleted = append(deleted, h)
			}
		}
	}
	delta := Delta{State: string(newState), Deletes: deleted}
	objs, err := d.multiget(ctx, c, changed)
	if err != nil {
		return fail("fetch changed items", err)
	}
	delta.Upserts = objs
	return delta, nil
}

// multiget fetches hrefs in batches.
func (d *CalDAV) multiget(ctx context.Context, c Collection, hrefs []string) ([]Object, error) {
	cli, _, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []Object
	for len(hrefs) > 0 {
		n := min(len(hrefs), multigetBatch)
		objs, err := cli.MultiGetCalendar(ctx, c.Href, &caldav.CalendarMultiGet{
			Paths:       hrefs[:n],
			CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.Data == nil {
				continue
			}
			out = append(out, Object{Href: hrefPath(o.Path), ETag: strings.Trim(o.ETag, `"`), Cal: o.Data})
		}
		hrefs = hrefs[n:]
	}
	return out, nil
}
