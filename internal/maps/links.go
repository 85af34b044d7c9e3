// Package maps is the maps service (docs/tools.md, "Maps"): maps_search
// (the shared geocoder), maps_get_directions (a link built from the
// caller's strings; no socket) and maps_open (the system's URL opener on a
// link it built). This file and opener.go do not import the MCP SDK;
// tools.go holds the tools.
package maps

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// The providers whose link formats are known.
const (
	ProviderApple = "apple"
	ProviderOSM   = "openstreetmap"
)

// Default base URLs per provider.
const (
	AppleURL = "https://maps.apple.com/"
	OSMURL   = "https://www.openstreetmap.org/"
)

// Links builds maps links for one provider. Every link is https and
// carries the caller's strings only as encoded query values.
type Links struct {
	provider string
	base     *url.URL
}

// DefaultProvider is apple on macOS (Maps.app answers maps.apple.com
// links) and openstreetmap elsewhere (open data, no account, any browser).
func DefaultProvider(goos string) string {
	if goos == "darwin" {
		return ProviderApple
	}
	return ProviderOSM
}

// NewLinks checks provider (empty = DefaultProvider(goos)) and base
// (empty = the provider's site; must be https, since maps_open opens only
// https links).
func NewLinks(provider, base, goos string) (*Links, error) {
	if provider == "" {
		provider = DefaultProvider(goos)
	}
	def := OSMURL
	switch provider {
	case ProviderApple:
		def = AppleURL
	case ProviderOSM:
	default:
		return nil, fmt.Errorf("[maps] provider %q: use %q or %q", provider, ProviderApple, ProviderOSM)
	}
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("[maps] base_url %q: want an https URL without query, such as %s", base, def)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return &Links{provider: provider, base: u}, nil
}

// Provider reports the provider.
func (l *Links) Provider() string { return l.provider }

// Modes are the travel modes, in the caller's words.
var Modes = []string{"driving", "walking", "transit", "cycling"}

// Directions returns the link for directions to destination, from origin
// ("" = wherever the user is, as the maps site decides). It opens nothing.
func (l *Links) Directions(origin, destination, mode string) (string, error) {
	origin, destination = strings.TrimSpace(origin), strings.TrimSpace(destination)
	if destination == "" {
		return "", errors.New("destination is required: give a place name or an address")
	}
	if mode == "" {
		mode = "driving"
	}
	q := url.Values{}
	u := *l.base
	switch l.provider {
	case ProviderApple:
		flag, ok := map[string]string{"driving": "d", "walking": "w", "transit": "r"}[mode]
		if !ok {
			return "", l.modeError(mode, "driving, walking or transit")
		}
		if origin != "" {
			q.Set("saddr", origin)
		}
		q.Set("daddr", destination)
		q.Set("dirflg", flag)
	default:
		engine, ok := map[string]string{"driving": "fossgis_osrm_car", "walking": "fossgis_osrm_foot", "cycling": "fossgis_osrm_bike"}[mode]
		if !ok {
			return "", l.modeError(mode, "driving, walking or cycling")
		}
		u.Path += "directions"
		q.Set("engine", engine)
		q.Set("from", origin)
		q.Set("to", destination)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (l *Links) modeError(mode, offered string) error {
	for _, m := range Modes {
		if m == mode {
			return fmt.Errorf("mode %s is not offered by the %s maps provider: use %s", mode, l.provider, offered)
		}
	}
	return fmt.Errorf("mode must be one of %s (got %s)", strings.Join(Modes, ", "), strconv.Quote(mode))
}

// Place returns the link showing a place by name.
func (l *Links) Place(name string) string {
	u := *l.base
	q := url.Values{}
	if l.provider == ProviderApple {
		q.Set("q", name)
	} else {
		u.Path += "search"
		q.Set("query", name)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Point returns the link showing a position.
func (l *Links) Point(lat, lon float64) string {
	la, lo := strconv.FormatFloat(lat, 'f', -1, 64), strconv.FormatFloat(lon, 'f', -1, 64)
	u := *l.base
	q := url.Values{}
	if l.provider == ProviderApple {
		q.Set("ll", la+","+lo)
		q.Set("q", la+","+lo)
	} else {
		q.Set("mlat", la)
		q.Set("mlon", lo)
		u.Fragment = "map=15/" + la + "/" + lo
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// urlLike matches text that is a URL or URI rather than a place: "://"
// anywhere, or a leading scheme glued to what follows ("javascript:…",
// "x-apple.systempreferences:…"). A place name written "Gare:Nord" is
// refused too; "Gare: Nord" (a space after the colon) is not.
var urlLike = regexp.MustCompile(`(?i)^\s*[a-z][a-z0-9+.\-]*:\S|://`)

// IsURL reports whether s looks like a URL: maps_open refuses those, since
// it opens only links it built itself (docs/security.md).
func IsURL(s string) bool { return urlLike.MatchString(s) }
