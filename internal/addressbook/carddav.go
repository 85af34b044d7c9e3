package addressbook

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-webdav/carddav"

	"github.com/tidings-mcp/tidings/internal/account"
)

// Timeout bounds one CardDAV request.
const Timeout = 30 * time.Second

// DAVConfig is one CardDAV [[contacts.accounts]] entry as the backend
// needs it.
type DAVConfig struct {
	Account  string
	URL      string
	Username string
	// Password resolves the secret when the first request needs it.
	Password func(ctx context.Context) (account.Secret, error)
	CAFile   string
}

// CardDAV is a CardDAV account (RFC 6352): discovery from its base URL
// (RFC 6764 /.well-known/carddav, then the current-user-principal, then
// its addressbook-home-set) and the address books by PROPFIND, through
// go-webdav; the objects by an addressbook-query REPORT and GET read
// here as raw bytes, and writes by PUT and DELETE with If-None-Match or
// If-Match, so nothing go-vcard would re-encode ever reaches the server
// (card.go says why).
type CardDAV struct {
	cfg DAVConfig
	ep  account.Endpoint
	hc  *http.Client

	mu   sync.Mutex
	home *url.URL
	cli  *carddav.Client
}

// NewCardDAV checks the account's URL (internal/account's URL rule) and
// builds its HTTP client; nothing is contacted until the first call.
func NewCardDAV(cfg DAVConfig) (*CardDAV, error) {
	ep, err := account.ParseEndpoint(cfg.URL, account.HTTP)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: url: %w", cfg.Account, err)
	}
	tlsc, err := ep.TLSConfig(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: %w", cfg.Account, err)
	}
	tr := &http.Transport{DialContext: ep.Dialer(Timeout).DialContext, TLSClientConfig: tlsc,
		TLSHandshakeTimeout: Timeout, MaxIdleConnsPerHost: 2}
	hc := &http.Client{Transport: tr, Timeout: Timeout,
		// Redirects only on the same scheme and host: a password never
		// travels to another server.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("redirect to another server (%s) refused", req.URL.Host)
			}
			return nil
		}}
	return &CardDAV{cfg: cfg, ep: ep, hc: hc}, nil
}

// Account implements Backend.
func (d *CardDAV) Account() string { return d.cfg.Account }

// Kind implements Backend.
func (d *CardDAV) Kind() string { return "carddav" }

// Endpoint is the account's URL, for status.
func (d *CardDAV) Endpoint() string { return d.ep.URL() }

// authed is the account's HTTP client with its credentials.
func authed(d *CardDAV) account.BasicAuth {
	return account.BasicAuth{Username: d.cfg.Username, Password: d.cfg.Password, Client: d.hc}
}

func (d *CardDAV) client(ctx context.Context) (*carddav.Client, *url.URL, error) {
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
	cli, err := carddav.NewClient(authed(d), base.String())
	if err != nil {
		return nil, nil, err
	}
	principal, err := cli.FindCurrentUserPrincipal(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("contacts account %q: find the principal: %w", d.cfg.Account, plain(err))
	}
	homePath, err := cli.FindAddressBookHomeSet(ctx, principal)
	if err != nil {
		return nil, nil, fmt.Errorf("contacts account %q: find the address book home: %w", d.cfg.Account, plain(err))
	}
	d.cli, d.home = cli, base.ResolveReference(&url.URL{Path: homePath})
	return d.cli, d.home, nil
}

// wellKnown follows /.well-known/carddav one step (RFC 6764 §5); nil
// when the server has none or redirects elsewhere.
func (d *CardDAV) wellKnown(ctx context.Context, base *url.URL) *url.URL {
	u := base.ResolveReference(&url.URL{Path: "/.well-known/carddav"})
	req, err := http.NewRequestWithContext(ctx, "PROPFIND", u.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Depth", "0")
	hc := *d.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := authed(&CardDAV{cfg: d.cfg, hc: &hc}).Do(req)
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

type statusError int

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }

// httpStatus finds an HTTP status in err: a statusError, or go-webdav's
// internal error type (found by its Code field).
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

// plain turns an HTTP status into a sentence a person can act on.
func plain(err error) error {
	switch httpStatus(err) {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("the server refused the login (HTTP %d): check username and password_env or password_cmd", httpStatus(err))
	case http.StatusNotFound:
		return errors.New("not found on the server (HTTP 404): check the account's url")
	}
	return err
}

// Books implements Backend.
func (d *CardDAV) Books(ctx context.Context) ([]Book, error) {
	cli, home, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	abs, err := cli.FindAddressBooks(ctx, home.Path)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: list address books: %w", d.cfg.Account, plain(err))
	}
	out := make([]Book, 0, len(abs))
	for _, ab := range abs {
		name := ab.Name
		if strings.TrimSpace(name) == "" {
			name = path.Base(strings.TrimSuffix(ab.Path, "/"))
		}
		out = append(out, Book{Account: d.cfg.Account, Name: name, Href: ab.Path})
	}
	return out, nil
}

// do sends one request built here and returns the response with its body
// read (bounded); a non-2xx status is a statusError.
func (d *CardDAV) do(ctx context.Context, method, href string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	_, home, err := d.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	u := home.ResolveReference(&url.URL{Path: href})
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), r)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := authed(d).Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("contacts account %q: %s: %w", d.cfg.Account, strings.ToLower(method), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, err
	}
	return resp, data, nil
}

// multistatus is the part of a REPORT answer read here.
type multistatus struct {
	Responses []struct {
		Href     string `xml:"DAV: href"`
		Propstat []struct {
			Status string `xml:"DAV: status"`
			Prop   struct {
				ETag string `xml:"DAV: getetag"`
				Data string `xml:"urn:ietf:params:xml:ns:carddav address-data"`
			} `xml:"DAV: prop"`
		} `xml:"DAV: propstat"`
	} `xml:"DAV: response"`
}

const queryBody = `<?xml version="1.0" encoding="utf-8"?>
<C:addressbook-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">
<D:prop><D:getetag/><C:address-data/></D:prop>
</C:addressbook-query>`

// Objects implements Backend: one addressbook-query REPORT for every card
// with its ETag and its bytes as the server holds them.
func (d *CardDAV) Objects(ctx context.Context, b Book) ([]Object, error) {
	resp, data, err := d.do(ctx, "REPORT", b.Href, []byte(queryBody), map[string]string{"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusMultiStatus {
		return nil, fmt.Errorf("contacts account %q: read %q: %w", d.cfg.Account, b.Name, plain(statusError(resp.StatusCode)))
	}
	var ms multistatus
	if err := xml.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("contacts account %q: read %q: the server's answer is not WebDAV XML: %w", d.cfg.Account, b.Name, err)
	}
	var out []Object
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			if ps.Prop.Data == "" || !strings.Contains(ps.Status, " 200") {
				continue
			}
			href := r.Href
			if u, err := url.Parse(href); err == nil {
				href = u.Path
			}
			out = append(out, Object{Href: href, ETag: strings.Trim(strings.TrimPrefix(ps.Prop.ETag, "W/"), `"`), Data: []byte(ps.Prop.Data)})
		}
	}
	return out, nil
}

// Get implements Backend.
func (d *CardDAV) Get(ctx context.Context, href string) (Object, error) {
	resp, data, err := d.do(ctx, http.MethodGet, href, nil, nil)
	if err != nil {
		return Object{}, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return Object{}, ErrNotFound
	case resp.StatusCode/100 != 2:
		return Object{}, fmt.Errorf("contacts account %q: read back: %w", d.cfg.Account, plain(statusError(resp.StatusCode)))
	}
	return Object{Href: href, ETag: strings.Trim(strings.TrimPrefix(resp.Header.Get("ETag"), "W/"), `"`), Data: data}, nil
}

func quoteETag(e string) string {
	if strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}

// Put implements Backend.
func (d *CardDAV) Put(ctx context.Context, b Book, name, href string, data []byte, cond Cond) (string, error) {
	if href == "" {
		href = strings.TrimSuffix(b.Href, "/") + "/" + url.PathEscape(name)
	}
	hdr := map[string]string{"Content-Type": "text/vcard; charset=utf-8"}
	if cond.IfNoneMatch {
		hdr["If-None-Match"] = "*"
	}
	if cond.IfMatch != "" {
		hdr["If-Match"] = quoteETag(cond.IfMatch)
	}
	resp, _, err := d.do(ctx, http.MethodPut, href, data, hdr)
	if err != nil {
		return "", err
	}
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed:
		return "", ErrPrecondition
	case resp.StatusCode/100 != 2:
		return "", fmt.Errorf("contacts account %q: write: %w", d.cfg.Account, plain(statusError(resp.StatusCode)))
	}
	return href, nil
}

// Delete implements Backend.
func (d *CardDAV) Delete(ctx context.Context, href, etag string) error {
	hdr := map[string]string{}
	if etag != "" {
		hdr["If-Match"] = quoteETag(etag)
	}
	resp, _, err := d.do(ctx, http.MethodDelete, href, nil, hdr)
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed:
		return ErrPrecondition
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("contacts account %q: delete: %w", d.cfg.Account, plain(statusError(resp.StatusCode)))
	}
	return nil
}
