// Package location is the Location service of seed 002 (docs/tools.md,
// "Location"): location_get_current from the platform's position source,
// and location_geocode / location_reverse_geocode through the shared
// geocoder (internal/geocode). Every tool is open world: a computer has no
// GPS, so even the current position comes over the network.
//
// Sources of location_get_current, found when the service is built:
//   - [location] ip_url: an IP geolocation service the person chose,
//     reached through the SSRF guard (internal/netguard);
//   - else, on Linux, GeoClue over the D-Bus system bus (geoclue.go), when
//     the bus answers and GeoClue is on it;
//   - macOS CoreLocation is not reachable from a Go binary without cgo:
//     without ip_url the tool is absent there, with that sentence.
//
// This file does not import the MCP SDK; tools.go does.
package location

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/geocode"
)

// Position is where the source says this computer is.
type Position struct {
	Latitude  float64
	Longitude float64
	// AccuracyMeters is the source's own radius; 0 when it gives none.
	AccuracyMeters float64
	// Place is "city, region, country" when the source names it (raw
	// third-party text: the tool escapes it).
	Place string
	// Source names the source ("ip lookup").
	Source string
}

// Source answers the current position.
type Source interface {
	Current(ctx context.Context) (Position, error)
	// Name and Endpoint describe the source for get_status.
	Name() string
	Endpoint() string
}

// ipHint ends every sentence of a platform without a working source.
const ipHint = ": set [location] ip_url in config.toml for an approximate position from this computer's IP address"

// Unavailable is the sentence for a platform whose built-in source does
// not work; geoclueWhy is the GeoClue probe's reason on Linux.
func Unavailable(goos, geoclueWhy string) string {
	switch goos {
	case "darwin":
		return "macOS CoreLocation is not reachable from Tidings (it needs cgo, which this build does not use)" + ipHint
	case "linux":
		return geoclueWhy + ipHint
	}
	return "no location source on " + goos + ipHint
}

// IPSource asks an IP geolocation service over the guarded client.
type IPSource struct {
	URL    *url.URL
	Client *http.Client
}

// NewIPSource checks ip_url: an absolute http or https URL without a
// user name or password. Its host is reached only through the SSRF guard
// of hc (a loopback or private address only when web_allow_hosts names it).
func NewIPSource(raw string, hc *http.Client) (*IPSource, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("[location] ip_url must be an http or https URL without a user name or password (got %q)", raw)
	}
	return &IPSource{URL: u, Client: hc}, nil
}

// Name implements Source.
func (s *IPSource) Name() string { return "ip lookup" }

// Endpoint implements Source.
func (s *IPSource) Endpoint() string { return s.URL.Redacted() }

// Current implements Source: the answer is a JSON object whose position is
// latitude/longitude (ipapi.co, freeipapi), lat/lon (ip-api.com) or
// loc "lat,lon" (ipinfo.io), with optional city, region and country.
func (s *IPSource) Current(ctx context.Context) (Position, error) {
	var m map[string]json.RawMessage
	if err := geocode.GetJSON(ctx, s.Client, "the IP location service", s.URL.String(), &m); err != nil {
		return Position{}, err
	}
	num := func(keys ...string) (float64, bool) {
		for _, k := range keys {
			raw, ok := m[k]
			if !ok {
				continue
			}
			var f float64
			if json.Unmarshal(raw, &f) == nil {
				return f, true
			}
			var str string
			if json.Unmarshal(raw, &str) == nil {
				if f, err := strconv.ParseFloat(strings.TrimSpace(str), 64); err == nil {
					return f, true
				}
			}
		}
		return 0, false
	}
	text := func(keys ...string) string {
		for _, k := range keys {
			var str string
			if raw, ok := m[k]; ok && json.Unmarshal(raw, &str) == nil && strings.TrimSpace(str) != "" {
				return strings.TrimSpace(str)
			}
		}
		return ""
	}
	lat, okLat := num("latitude", "lat")
	lon, okLon := num("longitude", "lon", "lng")
	if !okLat || !okLon {
		if loc := text("loc"); loc != "" {
			a, b, _ := strings.Cut(loc, ",")
			la, e1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
			lo, e2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
			lat, lon, okLat, okLon = la, lo, e1 == nil, e2 == nil
		}
	}
	if !okLat || !okLon || !geocode.ValidCoordinates(lat, lon) {
		return Position{}, errors.New("the IP location service's answer holds no valid latitude and longitude")
	}
	var parts []string
	for _, p := range []string{text("city"), text("region", "regionName", "region_name"), text("country_name", "country", "countryName")} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return Position{Latitude: lat, Longitude: lon, Place: strings.Join(parts, ", "), Source: s.Name()}, nil
}
