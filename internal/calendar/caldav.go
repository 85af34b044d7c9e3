package calendar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"path"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"

	"github.com/tidings-mcp/tidings/internal/account"
)

// Timeout bounds one CalDAV or ICS URL request.
const Timeout = 30 * time.Second

// DAVConfig is one [[calendar.accounts]] entry as the backend needs it.
type DAVConfig struct {
	Account  string
	URL      string
	Username string
	// Password resolves the secret when the first request needs it.
	Password func(ctx context.Context) (account.Secret, error)
	CAFile   string
	// Email is the user's own address on the account (the email
	// setting); empty = the username when it is an address.
	Email string
}

// CalDAV is a CalDAV account: discovery from its base URL (RFC 6764:
// /.well-known/caldav, then the current-user-principal, then its
// calendar-home-set, RFC 4791 §6.2.1), collections by PROPFIND, objects by
// calendar-query REPORT, writes by PUT with If-None-Match or If-Match.
type CalDAV struct {
	cfg DAVConfig
	ep  account.Endpoint
	hc  *http.Client

	mu   sync.Mutex
	home *url.URL // the calendar home set, once discovered
	cli  *caldav.Client
}

// NewCalDAV checks the account's URL (the URL rule of internal/account)
// and builds its HTTP client: TLS with the optional ca_file roots, and
// for a plain loopback URL a dialer that refuses any other address.
// Nothing is contacted until the first call.
func NewCalDAV(cfg DAVConfig) (*CalDAV, error) {
	ep, err := account.ParseEndpoint(cfg.URL, account.HTTP)
	if err != nil {
		return nil, fmt.Errorf("calendar account %q: url: %w", cfg.Account, err)
	}
	hc, err := newHTTPClient(ep, cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("calendar account %q: %w", cfg.Account, err)
	}
	return &CalDAV{cfg: cfg, ep: ep, hc: hc}, nil
}

// newHTTPClient is the client of one configured endpoint: TLS with the
// optional ca_file roots; for a plain loopback URL a dialer that refuses
// any other address; redirects only on the same scheme and host, so a
// password never travels to another server.
func newHTTPClient(ep account.Endpoint, caFile string) (*http.Client, error) {
	tlsc, err := ep.TLSConfig(caFile)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:         ep.Dialer(Timeout).DialContext,
		TLSClientConfig:     tlsc,
		TLSHandshakeTimeout: Timeout,
		MaxIdleConnsPerHost: 2,
	}
	hc := &http.Client{Transport: tr, Timeout: Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("redirect to another server (%s) refused", req.URL.Host)
			}
			return nil
		}}
	return hc, nil
}

// Account implements Backend.
func (d *CalDAV) Account() string { return d.cfg.Account }

// Address implements Addresser: the configured email, else the username
// when it is a bare address, else "".
func (d *CalDAV) Address() string {
	for _, s := range []string{d.cfg.Email, d.cfg.Username} {
		s = strings.TrimSpace(s)
		if a, err := mail.ParseAddress(s); err == nil && a.Address == s {
			return s
		}
	}
	return ""
}

// Kind implements Backend.
func (d *CalDAV) Kind() string { return "caldav" }

// Endpoint is the account's URL, for status (no credentials: the URL rule
// refuses them in URLs).
func (d *CalDAV) Endpoint() string { return d.ep.URL() }

// authed is the account's HTTP client with its credentials.
func authed(d *CalDAV) account.BasicAuth {
	return account.BasicAuth{Username: d.cfg.Username, Password: d.cfg.Password, Client: d.hc}
}

// client returns the CalDAV client and the home set, discovering them on
// first use.
func (d *CalDAV) client(ctx context.Context) (*caldav.Client, *url.URL, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cli != nil {
		return d.cli, d.home, nil
	}
	base, err := url.Parse(d.ep.URL())
	if err != nil {
		return nil, nil, err
	}
	if base.Path == "" || base.Path == "/" {
		if u := d.wellKnown(ctx, base); u != nil {
			base = u
		}
	}
	cli, err := caldav.NewClient(authed(d), base.String())
	if err != nil {
		return nil, nil, err
	}
	principal, err := cli.FindCurrentUserPrincipal(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("calendar account %q: find the principal: %w", d.cfg.Account, d.plain(err))
	}
	homePath, err := cli.FindCalendarHomeSet(ctx, principal)
	if err != nil {
		return nil, nil, fmt.Errorf("calendar account %q: find the calendar home: %w", d.cfg.Account, d.plain(err))
	}
	home := base.ResolveReference(&url.URL{Path: homePath})
	d.cli, d.home = cli, home
	return cli, home, nil
}

// wellKnown follows /.well-known/caldav one step (RFC 6764 §5); nil when
// the server has none.
func (d *CalDAV) wellKnown(ctx context.Context, base *url.URL) *url.URL {
	u := base.ResolveReference(&url.URL{Path: "/.well-known/caldav"})
	req, err := http.NewRequestWithContext(ctx, "PROPFIND", u.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Depth", "0")
	hc := *d.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := authed(&CalDAV{cfg: d.cfg, hc: &hc}).Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	loc, err := resp.Location()
	if err != nil || loc.Host != base.Host || loc.Scheme != base.Scheme {
		return nil
	}
	return loc
}

// plain turns an HTTP status error into a sentence a person can act on.
func (d *CalDAV) plain(err error) error {
	if code := httpStatus(err); code != 0 {
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("the server refused the login (HTTP %d): check username and password_env or password_cmd", code)
		case http.StatusNotFound:
			return fmt.Errorf("not found on the server (HTTP 404): check the account's url")
		}
	}
	return err
}

// statusError is an HTTP status of a request built here.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }

// httpStatus finds the HTTP status in err: a statusError, or go-webdav's
// error type (internal to that module, so found by its Code field).
func httpStatus(err error) int {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s, ok := e.(statusError); ok {
			return int(s)
		}
		v := reflect.ValueOf(e)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct {
			if f := v.FieldByName("Code"); f.IsValid() && f.CanInt() {
				return int(f.Int())
			}
		}
	}
	return 0
}

// Collections implements Backend.
func (d *CalDAV) Collections(ctx context.Context) ([]Collection, error) {
	cli, home, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	cals, err := cli.FindCalendars(ctx, home.Path)
	if err != nil {
		return nil, fmt.Errorf("calendar account %q: list calendars: %w", d.cfg.Account, d.plain(err))
	}
	out := make([]Collection, 0, len(cals))
	for _, c := range cals {
		name := c.Name
		if strings.TrimSpace(name) == "" {
			name = path.Base(strings.TrimSuffix(c.Path, "/"))
		}
		var comps []string
		for _, n := range c.SupportedComponentSet {
			comps = append(comps, strings.ToUpper(n))
		}
		out = append(out, Collection{Account: d.cfg.Account, Name: name, Href: c.Path, Components: comps})
	}
	return out, nil
}

// Objects implements Backend: every object holding comp. The expansion
// runs here, not on the server, so recurrence and zones follow one rule
// set (expand.go) whatever the server implements.
func (d *CalDAV) Objects(ctx context.Context, c Collection, comp string) ([]Object, error) {
	cli, _, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	q := &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter:  caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{{Name: comp}}},
	}
	objs, err := cli.QueryCalendar(ctx, c.Href, q)
	if err != nil {
		return nil, fmt.Errorf("calendar account %q: read %q: %w", d.cfg.Account, c.Name, d.plain(err))
	}
	out := make([]Object, 0, len(objs))
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		out = append(out, Object{Href: o.Path, ETag: o.ETag, Cal: o.Data})
	}
	return out, nil
}

// Put implements Backend: one PUT with the precondition (go-webdav's
// PutCalendarObject sends none, so the request is built here).
func (d *CalDAV) Put(ctx context.Context, c Collection, name string, cal *ical.Calendar, cond Cond) (string, error) {
	_, home, err := d.client(ctx)
	if err != nil {
		return "", err
	}
	body, err := encode(cal)
	if err != nil {
		return "", err
	}
	href := strings.TrimSuffix(c.Href, "/") + "/" + url.PathEscape(name)
	if strings.HasSuffix(c.Href, ".ics") || name == "" {
		href = c.Href // an existing object's own href
	}
	u := home.ResolveReference(&url.URL{Path: href})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", ical.MIMEType+"; charset=utf-8")
	if cond.IfNoneMatch {
		req.Header.Set("If-None-Match", "*")
	}
	if cond.IfMatch != "" {
		req.Header.Set("If-Match", quoteETag(cond.IfMatch))
	}
	resp, err := authed(d).Do(req)
	if err != nil {
		return "", fmt.Errorf("calendar account %q: write: %w", d.cfg.Account, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed:
		return "", ErrPrecondition
	case resp.StatusCode/100 != 2:
		return "", fmt.Errorf("calendar account %q: write: %w", d.cfg.Account, d.plain(statusError(resp.StatusCode)))
	}
	return u.Path, nil
}

// quoteETag puts an ETag back in the quotes go-webdav strips.
func quoteETag(e string) string {
	if strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}

// Get implements Backend.
func (d *CalDAV) Get(ctx context.Context, href string) (Object, error) {
	cli, _, err := d.client(ctx)
	if err != nil {
		return Object{}, err
	}
	o, err := cli.GetCalendarObject(ctx, href)
	if err != nil {
		return Object{}, fmt.Errorf("calendar account %q: read back: %w", d.cfg.Account, d.plain(err))
	}
	return Object{Href: o.Path, ETag: o.ETag, Cal: o.Data}, nil
}

// Check asks the server for the account's collections: reachability and
// credentials, no content.
func (d *CalDAV) Check(ctx context.Context) error {
	_, _, err := d.client(ctx)
	return err
}
