package weather

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/geocode"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

// Bounds of the numeric parameters (docs/tools.md, "Weather").
var (
	daysSpec  = coerce.IntSpec{Name: "days", Default: 7, Min: 1, Max: 16}
	hoursSpec = coerce.IntSpec{Name: "hours", Default: 24, Min: 1, Max: 72}
)

// New builds the weather service from the [weather] and [geocoder]
// sections. It is opt-in (toolset "weather"): its tools reach the
// internet, so it registers only when named (docs/configuration.md).
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	hc := env.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: geocode.Timeout}
	}
	cfg := env.Config
	geo, err := geocode.New(geocode.Config{Kind: cfg.Geocoder.Kind, BaseURL: cfg.Geocoder.BaseURL, ReverseURL: cfg.Geocoder.ReverseURL}, hc)
	if err != nil {
		return mcpserver.Service{}, err
	}
	wc, err := NewClient(cfg.Weather.BaseURL, hc)
	if err != nil {
		return mcpserver.Service{}, err
	}
	return Service(wc, wc.Endpoint(), geo), nil
}

// Service returns the weather service over backend b (endpoint names it
// in get_status) and geocoder geo.
func Service(b Backend, endpoint string, geo *geocode.Client) mcpserver.Service {
	backends := []mcpserver.BackendStatus{
		{Name: "forecast", Kind: "open-meteo", State: "unknown", Detail: endpoint},
		{Name: "geocoder", Kind: geo.Kind(), State: "unknown", Detail: geo.Endpoint()},
	}
	return mcpserver.Service{
		Name:  "weather",
		Tools: []mcpserver.Tool{currentTool(b, geo), forecastTool(b, geo), hourlyTool(b, geo)},
		Checks: func(context.Context) []mcpserver.CheckResult {
			return []mcpserver.CheckResult{{Name: "weather endpoints", Status: "ok",
				Detail: "forecasts from " + endpoint + ", places from the " + geo.Kind() + " geocoder at " + geo.Endpoint() + " (not contacted by this check)"}}
		},
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: backends}
		},
	}
}

// In is the position part every weather tool takes.
type In struct {
	Place     string        `json:"place,omitempty" jsonschema:"place name, or give latitude+longitude"`
	Latitude  coerce.Number `json:"latitude,omitzero" jsonschema:"-90 to 90"`
	Longitude coerce.Number `json:"longitude,omitzero" jsonschema:"-180 to 180"`
	Units     string        `json:"units,omitempty" jsonschema:"metric (default) or imperial"`
}

type forecastIn struct {
	Place     string        `json:"place,omitempty" jsonschema:"place name, or give latitude+longitude"`
	Latitude  coerce.Number `json:"latitude,omitzero" jsonschema:"-90 to 90"`
	Longitude coerce.Number `json:"longitude,omitzero" jsonschema:"-180 to 180"`
	Units     string        `json:"units,omitempty" jsonschema:"metric (default) or imperial"`
	Days      coerce.Number `json:"days,omitzero" jsonschema:"1-16 (default 7)"`
}

type hourlyIn struct {
	Place     string        `json:"place,omitempty" jsonschema:"place name, or give latitude+longitude"`
	Latitude  coerce.Number `json:"latitude,omitzero" jsonschema:"-90 to 90"`
	Longitude coerce.Number `json:"longitude,omitzero" jsonschema:"-180 to 180"`
	Units     string        `json:"units,omitempty" jsonschema:"metric (default) or imperial"`
	Hours     coerce.Number `json:"hours,omitzero" jsonschema:"1-72 (default 24)"`
}

// Where is the place an answer is for, with its time zone as the API
// reports it. Strings are third-party text, escaped by output.Name.
type Where struct {
	// Name is "place, region, country" as the geocoder knows it; absent
	// when the caller gave coordinates.
	Name      string  `json:"name,omitempty"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Timezone  string  `json:"timezone"`
	UTCOffset string  `json:"utc_offset"`
}

// Row is one time step: values keyed by open-meteo's variable names, in
// the answer's units.
type Row struct {
	Time       string              `json:"time"`
	Conditions string              `json:"conditions,omitempty"`
	Values     map[string]*float64 `json:"values"`
}

type currentOut struct {
	Place Where             `json:"place"`
	Now   Row               `json:"now"`
	Units map[string]string `json:"units"`
}

type rowsOut struct {
	Place Where             `json:"place"`
	Rows  []Row             `json:"rows"`
	Units map[string]string `json:"units"`
}

// descTail ends every weather description.
const descTail = " Times are local to the place; units are listed."

func tool(name, title, desc string) mcpserver.Tool {
	return mcpserver.Tool{Name: name, Title: title, Description: desc + descTail, Toolset: mcpserver.ToolsetWeather,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.Yes}
}

func currentTool(b Backend, geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(tool("weather_current", "Current weather", "Current weather at a place (open-meteo)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[In, currentOut] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, currentOut, error) {
				a, where, err := ask(ctx, b, geo, in, Query{Current: true})
				if err != nil {
					return nil, currentOut{}, err
				}
				out := currentOut{Place: where, Units: units(a.CurrentUnits, currentVars), Now: Row{
					Time: output.Name(a.CurrentTime), Conditions: Conditions(a.Current["weather_code"]), Values: map[string]*float64{}}}
				for _, v := range vars(currentVars) {
					out.Now.Values[v] = a.Current[v]
				}
				return nil, out, nil
			}
		})
}

func forecastTool(b Backend, geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(tool("weather_forecast", "Weather forecast", "Daily forecast for 1-16 days at a place (open-meteo)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[forecastIn, rowsOut] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, rowsOut, error) {
				days, err := coerce.Int(in.Days, daysSpec)
				if err != nil {
					return nil, rowsOut{}, err
				}
				a, where, err := ask(ctx, b, geo, In{in.Place, in.Latitude, in.Longitude, in.Units}, Query{Days: days})
				if err != nil {
					return nil, rowsOut{}, err
				}
				return nil, rowsOut{Place: where, Units: units(a.DailyUnits, dailyVars), Rows: rows(a.Daily, dailyVars, days)}, nil
			}
		})
}

// weather_hourly is the third tool (docs/tools.md, "Weather"): hour by
// hour for up to three days, for "will it rain at four" questions a daily
// row cannot answer, from the same endpoint (no second host to trust).
func hourlyTool(b Backend, geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(tool("weather_hourly", "Hourly weather", "Hour-by-hour forecast for the next 1-72 hours at a place (open-meteo)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[hourlyIn, rowsOut] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, in hourlyIn) (*mcp.CallToolResult, rowsOut, error) {
				hours, err := coerce.Int(in.Hours, hoursSpec)
				if err != nil {
					return nil, rowsOut{}, err
				}
				a, where, err := ask(ctx, b, geo, In{in.Place, in.Latitude, in.Longitude, in.Units}, Query{Hours: hours})
				if err != nil {
					return nil, rowsOut{}, err
				}
				return nil, rowsOut{Place: where, Units: units(a.HourlyUnits, hourlyVars), Rows: rows(a.Hourly, hourlyVars, hours)}, nil
			}
		})
}

// ask resolves the position, checks the units and asks the backend.
func ask(ctx context.Context, b Backend, geo *geocode.Client, in In, q Query) (*Answer, Where, error) {
	switch in.Units {
	case "", "metric":
	case "imperial":
		q.Imperial = true
	default:
		return nil, Where{}, fmt.Errorf("units must be metric or imperial (got %s)", geocode.Quote(in.Units))
	}
	p, err := geo.Locate(ctx, in.Place, in.Latitude, in.Longitude)
	if err != nil {
		return nil, Where{}, err
	}
	q.Latitude, q.Longitude = p.Latitude, p.Longitude
	a, err := b.Forecast(ctx, q)
	if err != nil {
		return nil, Where{}, err
	}
	if a == nil {
		return nil, Where{}, errors.New("the weather service gave no answer")
	}
	return a, Where{Name: output.Name(p.Label()), Latitude: p.Latitude, Longitude: p.Longitude, Timezone: output.Name(a.Timezone), UTCOffset: offset(a.UTCOffset)}, nil
}

// units returns the unit of each requested variable, escaped.
func units(u map[string]string, list string) map[string]string {
	out := map[string]string{}
	for _, v := range vars(list) {
		if s, ok := u[v]; ok {
			out[v] = output.Name(s)
		}
	}
	return out
}

// rows turns a column-wise series into at most limit rows of the
// requested variables.
func rows(s series, list string, limit int) []Row {
	times := s.Times()
	out := make([]Row, 0, min(len(times), limit))
	for i, t := range times {
		if i == limit {
			break
		}
		r := Row{Time: output.Name(t), Conditions: Conditions(s.Value("weather_code", i)), Values: map[string]*float64{}}
		for _, v := range vars(list) {
			r.Values[v] = s.Value(v, i)
		}
		out = append(out, r)
	}
	return out
}

// offset renders seconds east of UTC as "+01:00".
func offset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d:%02d", sign, sec/3600, sec%3600/60)
}
