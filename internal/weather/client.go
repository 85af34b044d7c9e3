// Package weather is the weather service (docs/tools.md, "Weather"):
// three read-only, open-world tools over open-meteo's forecast API, places
// named through the shared geocoder (internal/geocode). This file is the
// backend and does not import the MCP SDK; tools.go holds the tools.
package weather

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/geocode"
)

// DefaultURL is open-meteo's forecast API.
const DefaultURL = "https://api.open-meteo.com/v1"

// The variables each request asks for, in open-meteo's names.
const (
	currentVars = "temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m,wind_direction_10m"
	dailyVars   = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max"
	hourlyVars  = "temperature_2m,precipitation_probability,precipitation,weather_code,wind_speed_10m"
)

// Backend is what the tools need from a forecast API.
type Backend interface {
	Forecast(ctx context.Context, q Query) (*Answer, error)
}

// Query is one request: a position, what to ask for, and the unit system.
type Query struct {
	Latitude, Longitude float64
	Imperial            bool
	Current             bool
	Days                int // daily rows, 0 = none
	Hours               int // hourly rows from the current hour, 0 = none
}

// Answer is open-meteo's answer, decoded. Every string is third-party
// text; values are nil where the API sent null.
type Answer struct {
	Timezone     string `json:"timezone"`
	TimezoneAbbr string `json:"timezone_abbreviation"`
	UTCOffset    int    `json:"utc_offset_seconds"`
	Latitude     float64
	Longitude    float64

	CurrentUnits map[string]string   `json:"current_units"`
	Current      map[string]*float64 `json:"-"`
	CurrentTime  string              `json:"-"`

	DailyUnits map[string]string `json:"daily_units"`
	Daily      series            `json:"daily"`

	HourlyUnits map[string]string `json:"hourly_units"`
	Hourly      series            `json:"hourly"`
}

// series is a column-wise block of open-meteo: "time" and one array per
// variable.
type series map[string][]any

// Times returns the series' time column as strings.
func (s series) Times() []string {
	out := make([]string, 0, len(s["time"]))
	for _, v := range s["time"] {
		t, _ := v.(string)
		out = append(out, t)
	}
	return out
}

// Value returns variable name at row i, nil when missing or not a number.
func (s series) Value(name string, i int) *float64 {
	col := s[name]
	if i >= len(col) {
		return nil
	}
	if f, ok := col[i].(float64); ok {
		return &f
	}
	return nil
}

// Client is the open-meteo forecast client.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// NewClient checks base (empty = DefaultURL) and returns a client using
// hc. Configured URLs are trusted (docs/security.md, "Weather, maps and
// the geocoder").
func NewClient(base string, hc *http.Client) (*Client, error) {
	if base == "" {
		base = DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("[weather] base_url %q: want an http or https URL without query, such as %s", base, DefaultURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Client{base: u, hc: hc}, nil
}

// Endpoint reports the base URL without credentials.
func (c *Client) Endpoint() string { return c.base.Redacted() }

// Forecast asks open-meteo for q, in the place's own time zone
// (timezone=auto), and returns the decoded answer.
func (c *Client) Forecast(ctx context.Context, q Query) (*Answer, error) {
	v := url.Values{}
	v.Set("latitude", strconv.FormatFloat(q.Latitude, 'f', -1, 64))
	v.Set("longitude", strconv.FormatFloat(q.Longitude, 'f', -1, 64))
	v.Set("timezone", "auto")
	if q.Current {
		v.Set("current", currentVars)
	}
	if q.Days > 0 {
		v.Set("daily", dailyVars)
		v.Set("forecast_days", strconv.Itoa(q.Days))
	}
	if q.Hours > 0 {
		v.Set("hourly", hourlyVars)
		v.Set("forecast_hours", strconv.Itoa(q.Hours))
	}
	if q.Imperial {
		v.Set("temperature_unit", "fahrenheit")
		v.Set("wind_speed_unit", "mph")
		v.Set("precipitation_unit", "inch")
	}
	u := *c.base
	u.Path += "/forecast"
	u.RawQuery = v.Encode()
	var raw struct {
		Answer
		Current map[string]any `json:"current"`
	}
	if err := geocode.GetJSON(ctx, c.hc, "the weather service", u.String(), &raw); err != nil {
		return nil, err
	}
	a := raw.Answer
	if raw.Current != nil {
		a.Current = map[string]*float64{}
		for k, v := range raw.Current {
			if f, ok := v.(float64); ok {
				a.Current[k] = &f
			}
		}
		a.CurrentTime, _ = raw.Current["time"].(string)
	}
	if a.Timezone == "" || (q.Current && a.Current == nil) || (q.Days > 0 && a.Daily == nil) || (q.Hours > 0 && a.Hourly == nil) {
		return nil, fmt.Errorf("the weather service's answer lacks the forecast it was asked for")
	}
	return &a, nil
}

// vars splits a comma-separated variable list.
func vars(list string) []string { return strings.Split(list, ",") }

// Conditions describes a WMO weather code in words, as open-meteo
// documents the codes it uses; "" for an unknown code.
func Conditions(code *float64) string {
	if code == nil || *code < 0 || *code > 99 {
		return ""
	}
	return wmo[int(*code)]
}

var wmo = map[int]string{
	0: "clear sky", 1: "mainly clear", 2: "partly cloudy", 3: "overcast",
	45: "fog", 48: "depositing rime fog",
	51: "light drizzle", 53: "moderate drizzle", 55: "dense drizzle",
	56: "light freezing drizzle", 57: "dense freezing drizzle",
	61: "slight rain", 63: "moderate rain", 65: "heavy rain",
	66: "light freezing rain", 67: "heavy freezing rain",
	71: "slight snow fall", 73: "moderate snow fall", 75: "heavy snow fall", 77: "snow grains",
	80: "slight rain showers", 81: "moderate rain showers", 82: "violent rain showers",
	85: "slight snow showers", 86: "heavy snow showers",
	95: "thunderstorm", 96: "thunderstorm with slight hail", 99: "thunderstorm with heavy hail",
}
