package location

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/geocode"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/netguard"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

// IPTimeout bounds one IP lookup.
const IPTimeout = 10 * time.Second

var limitSpec = coerce.IntSpec{Name: "limit", Default: 5, Min: 1, Max: geocode.MaxResults, Clamp: true}

// New builds the Location service from [location] and [geocoder]: opt-in
// (toolset location). location_get_current is absent, with the sentence,
// when no source works here.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	return build(env, runtime.GOOS, netguard.Config{}, &GeoClue{})
}

// build is New with the platform, the guard's resolver and dialer and the
// GeoClue bus given (tests keep the network on loopback and run their own
// bus).
func build(env *mcpserver.ServiceEnv, goos string, gc netguard.Config, geoclue *GeoClue) (mcpserver.Service, error) {
	hc := env.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: geocode.Timeout}
	}
	cfg := env.Config
	geo, err := geocode.New(geocode.Config{Kind: cfg.Geocoder.Kind, BaseURL: cfg.Geocoder.BaseURL, ReverseURL: cfg.Geocoder.ReverseURL}, hc)
	if err != nil {
		return mcpserver.Service{}, err
	}
	var src Source
	var why string
	if raw := cfg.LocationService.IPURL; raw != "" {
		if env.Profile != nil {
			gc.Allow = env.Profile.WebAllowHosts
		}
		g, err := netguard.New(gc)
		if err != nil {
			return mcpserver.Service{}, fmt.Errorf("location: %w", err)
		}
		ip, err := NewIPSource(raw, g.Client(IPTimeout))
		if err != nil {
			return mcpserver.Service{}, err
		}
		src = ip
	} else if goos == "linux" {
		if why = geoclue.Probe(context.Background()); why == "" {
			src = geoclue
		} else {
			why = Unavailable(goos, why)
		}
	} else {
		why = Unavailable(goos, "")
	}
	return Service(src, why, geo), nil
}

// Service is the Location service over src (nil with why when there is
// none) and the geocoder geo.
func Service(src Source, why string, geo *geocode.Client) mcpserver.Service {
	current, search, reverse := currentTool(src), geocodeTool(geo), reverseTool(geo)
	current.Unavailable = why
	if !geo.CanReverse() {
		reverse.Unavailable = "the " + geo.Kind() + " geocoder has no reverse lookup: set [geocoder] kind = \"nominatim\" or reverse_url in config.toml"
	}
	backends := []mcpserver.BackendStatus{{Name: "geocoder", Kind: geo.Kind(), State: "unknown", Detail: geo.Endpoint()}}
	pos := mcpserver.BackendStatus{Name: "position", Kind: "none", State: "unreachable", Detail: why}
	check := mcpserver.CheckResult{Name: "location source", Status: "warn", Detail: "location_get_current is unavailable: " + why,
		Fix: "set [location] ip_url in config.toml, or leave location_get_current unused"}
	if src != nil {
		pos = mcpserver.BackendStatus{Name: "position", Kind: src.Name(), State: "unknown", Detail: src.Endpoint()}
		check = mcpserver.CheckResult{Name: "location source", Status: "ok", Detail: src.Name() + " at " + src.Endpoint() + " (not contacted by this check)"}
	}
	backends = append(backends, pos)
	return mcpserver.Service{
		Name:   "location",
		Tools:  []mcpserver.Tool{current, search, reverse},
		Checks: func(context.Context) []mcpserver.CheckResult { return []mcpserver.CheckResult{check} },
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: backends}
		},
	}
}

func tool(name, title, desc string) mcpserver.Tool {
	return mcpserver.Tool{Name: name, Title: title, Description: desc, Toolset: mcpserver.ToolsetLocation,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.Yes}
}

type currentOut struct {
	Latitude       float64 `json:"latitude"`
	Longitude      float64 `json:"longitude"`
	AccuracyMeters float64 `json:"accuracy_meters,omitempty"`
	Place          string  `json:"place,omitempty"`
	Source         string  `json:"source"`
}

func currentTool(src Source) mcpserver.Tool {
	return mcpserver.Define(tool("location_get_current", "Current location",
		"This computer's position (latitude, longitude, accuracy, place) from GeoClue or the configured IP lookup (city-level; that service sees this computer's IP address)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[struct{}, currentOut] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, currentOut, error) {
				if src == nil {
					return nil, currentOut{}, errors.New("no location source works here")
				}
				p, err := src.Current(ctx)
				if err != nil {
					return nil, currentOut{}, err
				}
				return nil, currentOut{Latitude: p.Latitude, Longitude: p.Longitude, AccuracyMeters: p.AccuracyMeters, Place: output.Name(p.Place), Source: p.Source}, nil
			}
		})
}

type geocodeIn struct {
	Query string        `json:"query" jsonschema:"place or address"`
	Limit coerce.Number `json:"limit,omitzero" jsonschema:"1-10 (default 5)"`
}

// Place is one place the geocoder knows; Name is third-party text
// (escaped).
type Place struct {
	Name      string  `json:"name"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Timezone  string  `json:"timezone,omitempty"`
}

func place(p geocode.Place) Place {
	return Place{Name: output.Name(p.Label()), Latitude: p.Latitude, Longitude: p.Longitude, Timezone: output.Name(p.Timezone)}
}

type placesOut struct {
	Places []Place `json:"places"`
}

func geocodeTool(geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(tool("location_geocode", "Geocode a place", "Coordinates of a place or address (the configured geocoder)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[geocodeIn, placesOut] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, in geocodeIn) (*mcp.CallToolResult, placesOut, error) {
				limit, err := coerce.Int(in.Limit, limitSpec)
				if err != nil {
					return nil, placesOut{}, err
				}
				q := strings.TrimSpace(in.Query)
				if q == "" {
					return nil, placesOut{}, errors.New("query is required: give a place or an address")
				}
				found, err := geo.Search(ctx, q, limit)
				if err != nil {
					return nil, placesOut{}, err
				}
				if len(found) == 0 {
					return nil, placesOut{}, errors.New("the geocoder knows no place named " + geocode.Quote(q) + ": try another spelling or a larger place nearby")
				}
				out := placesOut{Places: make([]Place, 0, len(found))}
				for _, p := range found {
					out.Places = append(out.Places, place(p))
				}
				return nil, out, nil
			}
		})
}

type reverseIn struct {
	Latitude  coerce.Number `json:"latitude" jsonschema:"-90 to 90"`
	Longitude coerce.Number `json:"longitude" jsonschema:"-180 to 180"`
}

func reverseTool(geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(tool("location_reverse_geocode", "Reverse geocode", "The place or address at given coordinates (the configured geocoder)."),
		func(*mcpserver.Deps) mcp.ToolHandlerFor[reverseIn, Place] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, in reverseIn) (*mcp.CallToolResult, Place, error) {
				lat, lon, given, err := geocode.Coordinates(in.Latitude, in.Longitude)
				if err != nil {
					return nil, Place{}, err
				}
				if !given {
					return nil, Place{}, errors.New("latitude and longitude are required")
				}
				p, ok, err := geo.Reverse(ctx, lat, lon)
				if err != nil {
					return nil, Place{}, err
				}
				if !ok {
					return nil, Place{}, errors.New("the geocoder knows no place at these coordinates")
				}
				return nil, place(p), nil
			}
		})
}
