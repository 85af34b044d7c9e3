// Package geocode is the shared geocoder client of the weather and maps
// services (docs/tools.md, "Weather" and "Maps"; docs/configuration.md,
// "[geocoder]"): forward search by place name, and reverse lookup only
// when the configured geocoder offers it.
//
// Two wire dialects are spoken: open-meteo's geocoding API (the default,
// forward search only) and Nominatim's (search and reverse). The base URLs
// come from config.toml and are trusted: they are the user's choice, not a
// caller's, so no SSRF refusal applies to them (docs/security.md, "Weather,
// maps and the geocoder"). Every answer is size-capped and every string in
// it is third-party text: callers pass names through internal/output before
// they leave the server. This package does not import the MCP SDK.
package geocode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The dialects a geocoder may speak (config `[geocoder] kind`).
const (
	KindOpenMeteo = "open-meteo"
	KindNominatim = "nominatim"
)

// Default base URLs per dialect.
const (
	DefaultOpenMeteoURL = "https://geocoding-api.open-meteo.com/v1"
	DefaultNominatimURL = "https://nominatim.openstreetmap.org"
)

// MaxResponseBytes caps one geocoder answer; a bigger one is refused, not
// cut (a cut JSON document does not parse).
const MaxResponseBytes = 1 << 20

// Timeout bounds one request when the caller's HTTP client has none.
const Timeout = 15 * time.Second

// MaxResults is the most places one search asks for.
const MaxResults = 10

// userAgent identifies Tidings to the geocoder (Nominatim's usage policy
// asks every client to).
const userAgent = "tidings-mcp (+https://github.com/tidings-mcp/tidings)"

// Config is the `[geocoder]` section as the client needs it.
type Config struct {
	// Kind is KindOpenMeteo (default) or KindNominatim.
	Kind string
	// BaseURL is the search endpoint's base; empty = the kind's default.
	BaseURL string
	// ReverseURL is the base of a Nominatim-compatible reverse endpoint
	// (`{ReverseURL}/reverse`). Empty = BaseURL for KindNominatim, none for
	// open-meteo, which offers no reverse lookup.
	ReverseURL string
}

// Place is one geocoder answer. Every string is third-party text.
type Place struct {
	Name        string
	Admin1      string // state or region, when the geocoder says
	Country     string
	CountryCode string
	// Timezone is the IANA zone open-meteo reports; empty for Nominatim.
	Timezone  string
	Latitude  float64
	Longitude float64
}

// Label is the place as one line: "name, region, country", leaving out
// empty and repeated parts.
func (p Place) Label() string {
	parts := make([]string, 0, 3)
	for _, s := range []string{p.Name, p.Admin1, p.Country} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// ErrNoReverse is returned by Reverse when the configured geocoder offers
// no reverse lookup; its text is the sentence the caller gets.
var ErrNoReverse = errors.New("reverse geocoding is not available: the configured geocoder (open-meteo) only searches by name; set [geocoder] kind = \"nominatim\" or [geocoder] reverse_url in config.toml to a Nominatim-compatible server")

// Client talks to one configured geocoder. It is safe for concurrent use.
type Client struct {
	kind    string
	base    *url.URL
	reverse *url.URL // nil: no reverse lookup
	hc      *http.Client
}

// New checks cfg and returns a client using hc (nil: a client with
// Timeout). A malformed URL or an unknown kind is a configuration error.
func New(cfg Config, hc *http.Client) (*Client, error) {
	c := &Client{kind: cfg.Kind, hc: hc}
	if c.kind == "" {
		c.kind = KindOpenMeteo
	}
	def := DefaultOpenMeteoURL
	switch c.kind {
	case KindOpenMeteo:
	case KindNominatim:
		def = DefaultNominatimURL
	default:
		return nil, fmt.Errorf("[geocoder] kind %q: use %q or %q", cfg.Kind, KindOpenMeteo, KindNominatim)
	}
	base := cfg.BaseURL
	if base == "" {
		base = def
	}
	var err error
	if c.base, err = parseBase("base_url", base); err != nil {
		return nil, err
	}
	switch {
	case cfg.ReverseURL != "":
		if c.reverse, err = parseBase("reverse_url", cfg.ReverseURL); err != nil {
			return nil, err
		}
	case c.kind == KindNominatim:
		c.reverse = c.base
	}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: Timeout}
	}
	return c, nil
}

// parseBase accepts an absolute http or https URL without query or
// fragment; a trailing slash is dropped.
func parseBase(key, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("[geocoder] %s %q: want an http or https URL without query, such as %s", key, s, DefaultOpenMeteoURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Kind reports the configured dialect.
func (c *Client) Kind() string { return c.kind }

// Endpoint reports the search base URL (for get_status; no secrets live
// in it by construction of the config).
func (c *Client) Endpoint() string { return c.base.Redacted() }

// CanReverse reports whether Reverse can work.
func (c *Client) CanReverse() bool { return c.reverse != nil }

// Search looks name up and returns at most limit places, best first; an
// empty list means the geocoder knows no such place.
func (c *Client) Search(ctx context.Context, name string, limit int) ([]Place, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, errors.New("the place name is empty")
	}
	limit = min(max(limit, 1), MaxResults)
	q := url.Values{}
	if c.kind == KindNominatim {
		q.Set("q", name)
		q.Set("format", "jsonv2")
		q.Set("limit", strconv.Itoa(limit))
		var rows []nominatimPlace
		if err := c.get(ctx, c.base, "/search", q, &rows); err != nil {
			return nil, err
		}
		out := make([]Place, 0, len(rows))
		for _, r := range rows {
			if p, ok := r.place(); ok {
				out = append(out, p)
			}
		}
		return out, nil
	}
	q.Set("name", name)
	q.Set("count", strconv.Itoa(limit))
	q.Set("format", "json")
	var body struct {
		Results []struct {
			Name        string   `json:"name"`
			Latitude    *float64 `json:"latitude"`
			Longitude   *float64 `json:"longitude"`
			CountryCode string   `json:"country_code"`
			Country     string   `json:"country"`
			Admin1      string   `json:"admin1"`
			Timezone    string   `json:"timezone"`
		} `json:"results"`
		Error  bool   `json:"error"`
		Reason string `json:"reason"`
	}
	if err := c.get(ctx, c.base, "/search", q, &body); err != nil {
		return nil, err
	}
	if body.Error {
		return nil, errors.New("the geocoder refused the search")
	}
	out := make([]Place, 0, len(body.Results))
	for _, r := range body.Results {
		if r.Latitude == nil || r.Longitude == nil || !ValidCoordinates(*r.Latitude, *r.Longitude) {
			continue // a row without a usable position is no answer
		}
		out = append(out, Place{Name: r.Name, Admin1: r.Admin1, Country: r.Country, CountryCode: r.CountryCode,
			Timezone: r.Timezone, Latitude: *r.Latitude, Longitude: *r.Longitude})
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Reverse returns the place at the coordinates, ErrNoReverse when the
// geocoder offers no reverse lookup, or ok=false when it knows nothing
// there (the open sea).
func (c *Client) Reverse(ctx context.Context, lat, lon float64) (p Place, ok bool, err error) {
	if c.reverse == nil {
		return Place{}, false, ErrNoReverse
	}
	if !ValidCoordinates(lat, lon) {
		return Place{}, false, errors.New("the coordinates are out of range")
	}
	q := url.Values{}
	q.Set("lat", strconv.FormatFloat(lat, 'f', -1, 64))
	q.Set("lon", strconv.FormatFloat(lon, 'f', -1, 64))
	q.Set("format", "jsonv2")
	var r nominatimPlace
	if err := c.get(ctx, c.reverse, "/reverse", q, &r); err != nil {
		return Place{}, false, err
	}
	if r.Error != "" {
		return Place{}, false, nil
	}
	p, ok = r.place()
	return p, ok, nil
}

// nominatimPlace is one row of Nominatim's jsonv2 output (search and
// reverse share it).
type nominatimPlace struct {
	Lat         string `json:"lat"`
	Lon         string `json:"lon"`
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Address     struct {
		State       string `json:"state"`
		Country     string `json:"country"`
		CountryCode string `json:"country_code"`
	} `json:"address"`
	Error string `json:"error"`
}

func (r nominatimPlace) place() (Place, bool) {
	lat, err1 := strconv.ParseFloat(r.Lat, 64)
	lon, err2 := strconv.ParseFloat(r.Lon, 64)
	if err1 != nil || err2 != nil || !ValidCoordinates(lat, lon) {
		return Place{}, false
	}
	name := r.Name
	if name == "" {
		name = r.DisplayName
	}
	if name == "" {
		return Place{}, false
	}
	return Place{Name: name, Admin1: r.Address.State, Country: r.Address.Country,
		CountryCode: strings.ToUpper(r.Address.CountryCode), Latitude: lat, Longitude: lon}, true
}

// get fetches base+path?q and decodes the JSON answer into v. Errors are
// one sentence each and never quote the answer (third-party text).
func (c *Client) get(ctx context.Context, base *url.URL, path string, q url.Values, v any) error {
	u := *base
	u.Path += path
	u.RawQuery = q.Encode()
	return GetJSON(ctx, c.hc, "the geocoder", u.String(), v)
}

// GetJSON fetches u with hc and decodes a JSON answer of at most
// MaxResponseBytes into v. who names the remote in error sentences ("the
// geocoder", "the weather service"); the errors never quote the answer.
// The weather service shares it.
func GetJSON(ctx context.Context, hc *http.Client, who, u string, v any) error {
	if _, ok := ctx.Deadline(); !ok && hc.Timeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: building the request: %w", who, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not answer in time", who)
		}
		return fmt.Errorf("%s could not be reached (%s)", who, reachError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("%s's answer could not be read", who)
	}
	if len(body) > MaxResponseBytes {
		return fmt.Errorf("%s's answer is larger than %d KiB and was refused", who, MaxResponseBytes>>10)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d", who, resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s's answer is not the JSON it should send", who)
	}
	return nil
}

// reachError names a transport failure without echoing a remote's text.
func reachError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return "timed out"
	}
	return "connection failed"
}

// ValidCoordinates reports whether lat/lon are finite and in range:
// latitude in [-90, 90], longitude in [-180, 180].
func ValidCoordinates(lat, lon float64) bool {
	return !math.IsNaN(lat) && !math.IsNaN(lon) && lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
}
