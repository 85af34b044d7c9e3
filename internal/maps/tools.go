package maps

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/geocode"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

var limitSpec = coerce.IntSpec{Name: "limit", Default: 5, Min: 1, Max: geocode.MaxResults, Clamp: true}

// New builds the maps service from [maps] and [geocoder]. It is opt-in
// (toolset "maps"). maps_open is kept out, with the reason, when no opener
// is on PATH; the other two tools work without one.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	return build(env, runtime.GOOS)
}

func build(env *mcpserver.ServiceEnv, goos string) (mcpserver.Service, error) {
	hc := env.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: geocode.Timeout}
	}
	cfg := env.Config
	geo, err := geocode.New(geocode.Config{Kind: cfg.Geocoder.Kind, BaseURL: cfg.Geocoder.BaseURL, ReverseURL: cfg.Geocoder.ReverseURL}, hc)
	if err != nil {
		return mcpserver.Service{}, err
	}
	links, err := NewLinks(cfg.Maps.Provider, cfg.Maps.BaseURL, goos)
	if err != nil {
		return mcpserver.Service{}, err
	}
	opener, openErr := FindOpener(goos)
	open := openTool(links, opener)
	if openErr != nil {
		open.Unavailable = openErr.Error()
	}
	openerState := mcpserver.BackendStatus{Name: "opener", Kind: OpenerName(goos), State: "ok"}
	if openErr != nil {
		openerState.State, openerState.Detail = "unreachable", openErr.Error()
	} else {
		openerState.Detail = opener.Path
	}
	backends := []mcpserver.BackendStatus{
		{Name: "geocoder", Kind: geo.Kind(), State: "unknown", Detail: geo.Endpoint()},
		{Name: "links", Kind: links.Provider(), State: "ok", Detail: links.base.String()},
		openerState,
	}
	return mcpserver.Service{
		Name:  "maps",
		Tools: []mcpserver.Tool{searchTool(geo), directionsTool(links), open},
		Checks: func(context.Context) []mcpserver.CheckResult {
			c := mcpserver.CheckResult{Name: "maps opener", Status: "ok", Detail: OpenerName(goos) + " at " + backends[2].Detail}
			if openErr != nil {
				c.Status, c.Detail = "warn", "maps_open is unavailable: "+openErr.Error()
				c.Fix = "install xdg-utils (or put an xdg-open on PATH); maps_search and maps_get_directions work without it"
			}
			return []mcpserver.CheckResult{c}
		},
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: backends}
		},
	}, nil
}

type searchIn struct {
	Query     string        `json:"query,omitempty" jsonschema:"place or address to find; or give latitude+longitude for what is there"`
	Latitude  coerce.Number `json:"latitude,omitzero" jsonschema:"-90 to 90"`
	Longitude coerce.Number `json:"longitude,omitzero" jsonschema:"-180 to 180"`
	Limit     coerce.Number `json:"limit,omitzero" jsonschema:"1-10 (default 5)"`
}

// Place is one found place; Name is third-party text (escaped).
type Place struct {
	Name      string  `json:"name"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Timezone  string  `json:"timezone,omitempty"`
}

type searchOut struct {
	Places []Place `json:"places"`
}

func searchTool(geo *geocode.Client) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "maps_search", Title: "Search places", Toolset: mcpserver.ToolsetMaps,
		Description: "Find places by name or address with their coordinates, or what is at given coordinates (the configured geocoder).",
		ReadOnly:    mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.Yes,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[searchIn, searchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			limit, err := coerce.Int(in.Limit, limitSpec)
			if err != nil {
				return nil, searchOut{}, err
			}
			lat, lon, coords, err := geocode.Coordinates(in.Latitude, in.Longitude)
			if err != nil {
				return nil, searchOut{}, err
			}
			query := strings.TrimSpace(in.Query)
			var found []geocode.Place
			switch {
			case coords && query != "":
				return nil, searchOut{}, errors.New("give a query or latitude and longitude, not both")
			case coords:
				p, ok, err := geo.Reverse(ctx, lat, lon)
				if err != nil {
					return nil, searchOut{}, err
				}
				if !ok {
					return nil, searchOut{}, errors.New("the geocoder knows no place at these coordinates")
				}
				found = []geocode.Place{p}
			case query == "":
				return nil, searchOut{}, errors.New("give a query (a place or address) or latitude and longitude")
			default:
				if found, err = geo.Search(ctx, query, limit); err != nil {
					return nil, searchOut{}, err
				}
				if len(found) == 0 {
					return nil, searchOut{}, errors.New("the geocoder knows no place named " + geocode.Quote(query) + ": try another spelling or a larger place nearby")
				}
			}
			out := searchOut{Places: make([]Place, 0, len(found))}
			for _, p := range found {
				out.Places = append(out.Places, Place{Name: output.Name(p.Label()), Latitude: p.Latitude, Longitude: p.Longitude, Timezone: output.Name(p.Timezone)})
			}
			return nil, out, nil
		}
	})
}

type directionsIn struct {
	Destination string `json:"destination" jsonschema:"where to go: a place name or address"`
	Origin      string `json:"origin,omitempty" jsonschema:"where from (default: the user's location)"`
	Mode        string `json:"mode,omitempty" jsonschema:"driving (default), walking, transit or cycling"`
}

type linkOut struct {
	URL string `json:"url"`
}

// maps_get_directions is closed world and read-only: it concatenates a
// link from the caller's own strings and opens no socket (docs/tools.md,
// "Maps").
func directionsTool(links *Links) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "maps_get_directions", Title: "Directions link", Toolset: mcpserver.ToolsetMaps,
		Description: "Build a maps link with directions between two places. Contacts nothing; give the link to the user or to maps_open.",
		ReadOnly:    mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[directionsIn, linkOut] {
		return func(_ context.Context, _ *mcp.CallToolRequest, in directionsIn) (*mcp.CallToolResult, linkOut, error) {
			u, err := links.Directions(in.Origin, in.Destination, in.Mode)
			return nil, linkOut{URL: u}, err
		}
	})
}

type openIn struct {
	Place       string        `json:"place,omitempty" jsonschema:"place name or address to show; or give latitude+longitude"`
	Latitude    coerce.Number `json:"latitude,omitzero" jsonschema:"-90 to 90"`
	Longitude   coerce.Number `json:"longitude,omitzero" jsonschema:"-180 to 180"`
	Destination string        `json:"destination,omitempty" jsonschema:"show directions from place (or here) to this instead"`
	Mode        string        `json:"mode,omitempty" jsonschema:"with destination: driving, walking, transit or cycling"`
}

type openOut struct {
	URL    string `json:"url"`
	Opened bool   `json:"opened"`
}

// maps_open acts on the user's desktop (it launches the maps app or a
// browser, which then loads the map from the internet), so it is neither
// read-only nor idempotent, and open world (docs/tools.md, "Maps").
func openTool(links *Links, o *Opener) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "maps_open", Title: "Open a map", Toolset: mcpserver.ToolsetMaps,
		Description: "Open a place, coordinates or directions in the user's maps app or browser. Takes place names, never URLs.",
		ReadOnly:    mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.Yes,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[openIn, openOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in openIn) (*mcp.CallToolResult, openOut, error) {
			for _, s := range []string{in.Place, in.Destination} {
				if IsURL(s) {
					return nil, openOut{}, errors.New("maps_open opens places, not links: give a place name, an address or coordinates")
				}
			}
			lat, lon, coords, err := geocode.Coordinates(in.Latitude, in.Longitude)
			if err != nil {
				return nil, openOut{}, err
			}
			place := strings.TrimSpace(in.Place)
			var link string
			switch {
			case coords && place != "":
				return nil, openOut{}, errors.New("give a place name or latitude and longitude, not both")
			case strings.TrimSpace(in.Destination) != "":
				if coords {
					place = geocodeLabel(lat, lon)
				}
				if link, err = links.Directions(place, in.Destination, in.Mode); err != nil {
					return nil, openOut{}, err
				}
			case coords:
				link = links.Point(lat, lon)
			case place != "":
				link = links.Place(place)
			default:
				return nil, openOut{}, errors.New("give a place name, latitude and longitude, or a destination")
			}
			if err := o.Open(ctx, link); err != nil {
				return nil, openOut{}, err
			}
			return nil, openOut{URL: link, Opened: true}, nil
		}
	})
}

// geocodeLabel writes coordinates the way maps sites read an origin.
func geocodeLabel(lat, lon float64) string {
	return strconv.FormatFloat(lat, 'f', -1, 64) + "," + strconv.FormatFloat(lon, 'f', -1, 64)
}
