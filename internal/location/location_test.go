package location

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/netguard"
	"github.com/tidings-mcp/tidings/internal/netguard/netguardtest"
)

// world is the tests' network: a loopback geocoder (Nominatim dialect) and
// an IP lookup at a public-looking address served in memory by the
// guard's test dialer; "private.test" resolves to loopback.
func world(t *testing.T, ipAnswer string) (geoURL string, gc netguard.Config, asked *int) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "geocode", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	geo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			if r.URL.Query().Get("q") == "Berlin" {
				w.Write(read("nominatim_search_berlin.json"))
				return
			}
			w.Write([]byte("[]"))
		case "/reverse":
			w.Write(read("nominatim_reverse_berlin.json"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(geo.Close)
	n := 0
	gc = netguard.Config{
		Resolver: netguardtest.NewResolver(map[string][]string{"ip.test": {"93.184.215.14"}, "private.test": {"127.0.0.1"}}),
		Dialer: &netguardtest.Dialer{T: t, Public: map[netip.Addr]http.Handler{
			netip.MustParseAddr("93.184.215.14"): http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n++
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(ipAnswer))
			}),
		}},
	}
	return geo.URL, gc, &n
}

func session(t *testing.T, goos, geoURL, ipURL string, gc netguard.Config, toolsets ...string) *mcp.ClientSession {
	t.Helper()
	cfg := &config.Config{}
	cfg.Geocoder.Kind, cfg.Geocoder.BaseURL = "nominatim", geoURL
	cfg.LocationService.IPURL = ipURL
	svc, err := build(&mcpserver.ServiceEnv{Config: cfg}, goos, gc, &GeoClue{Address: "unix:path=/nonexistent/tidings-test-bus"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test"}, mcpserver.Filters{Toolsets: append([]string{"location"}, toolsets...)}, svc)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Sessions(t, srv)["stdio"]
}

// TestLocationToolsThroughAClient: with ip_url set, location_get_current
// answers from the IP lookup (through the guard), and geocode and reverse
// geocode answer from the configured geocoder; place names are escaped.
func TestLocationToolsThroughAClient(t *testing.T) {
	geoURL, gc, asked := world(t, `{"ip":"192.0.2.1","latitude":52.52,"longitude":13.40,"city":"Berlin","region":"Land <Berlin>","country_name":"Germany"}`)
	cs := session(t, "linux", geoURL, "http://ip.test/json", gc)
	isErr, text, data := mcptest.Call(t, cs, "location_get_current", `{}`)
	if isErr || data["latitude"] != 52.52 || data["place"] != "Berlin, Land &lt;Berlin&gt;, Germany" || data["source"] != "ip lookup" || *asked != 1 {
		t.Fatalf("current: %v %s %v", isErr, text, data)
	}
	isErr, text, data = mcptest.Call(t, cs, "location_geocode", `{"query":"Berlin","limit":"2"}`)
	if isErr || len(data["places"].([]any)) == 0 {
		t.Fatalf("geocode: %v %s %v", isErr, text, data)
	}
	isErr, text, data = mcptest.Call(t, cs, "location_reverse_geocode", `{"latitude":"52.52","longitude":13.4}`)
	if isErr || !strings.Contains(data["name"].(string), "Brandenburger Tor") {
		t.Fatalf("reverse: %v %s %v", isErr, text, data)
	}
	for args, want := range map[string]string{`{"query":"Nowhere"}`: "knows no place", `{"query":" "}`: "query is required"} {
		if isErr, text, _ := mcptest.Call(t, cs, "location_geocode", args); !isErr || !strings.Contains(text, want) {
			t.Fatalf("%s: %v %s", args, isErr, text)
		}
	}
	if isErr, text, _ := mcptest.Call(t, cs, "location_reverse_geocode", `{"latitude":91,"longitude":0}`); !isErr || !strings.Contains(text, "latitude") {
		t.Fatalf("latitude 91: %v %s", isErr, text)
	}
}

// TestIPLookupAnswers: the answer shapes of the common services, and one
// with no position, which is an error sentence.
func TestIPLookupAnswers(t *testing.T) {
	for _, tt := range []struct{ name, answer, place, err string }{
		{"ipapi.co", `{"latitude":48.85,"longitude":2.35,"city":"Paris","region":"Île-de-France","country_name":"France"}`, "Paris, Île-de-France, France", ""},
		{"ip-api.com", `{"status":"success","lat":48.85,"lon":2.35,"city":"Paris","regionName":"IDF","country":"France"}`, "Paris, IDF, France", ""},
		{"ipinfo.io", `{"loc":"48.85,2.35","city":"Paris","region":"IDF","country":"FR"}`, "Paris, IDF, FR", ""},
		{"strings", `{"latitude":"48.85","longitude":"2.35"}`, "", ""},
		{"no position", `{"ip":"192.0.2.1"}`, "", "holds no valid latitude and longitude"},
		{"out of range", `{"lat":123,"lon":2}`, "", "holds no valid latitude and longitude"},
		{"not JSON", `<html>`, "", "is not the JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, gc, _ := world(t, tt.answer)
			g, err := netguard.New(gc)
			if err != nil {
				t.Fatal(err)
			}
			src, err := NewIPSource("http://ip.test/", g.Client(IPTimeout))
			if err != nil {
				t.Fatal(err)
			}
			p, err := src.Current(context.Background())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || p.Latitude != 48.85 || p.Longitude != 2.35 || p.Place != tt.place {
				t.Fatalf("%+v %v", p, err)
			}
		})
	}
}

// TestIPLookupGoesThroughTheSSRFGuard: an ip_url whose host resolves to a
// loopback or private address is refused at dial time (unless
// web_allow_hosts names it), and a URL with credentials or another
// scheme is a configuration error.
func TestIPLookupGoesThroughTheSSRFGuard(t *testing.T) {
	geoURL, gc, _ := world(t, `{}`)
	cs := session(t, "linux", geoURL, "http://private.test:8080/json", gc)
	isErr, text, _ := mcptest.Call(t, cs, "location_get_current", `{}`)
	if !isErr || !strings.Contains(text, "could not be reached") {
		t.Fatalf("private address: %v %s", isErr, text)
	}
	for _, bad := range []string{"ftp://ip.test/", "https://user:pw@ip.test/", "ip.test/json"} {
		cfg := &config.Config{}
		cfg.LocationService.IPURL = bad
		if _, err := build(&mcpserver.ServiceEnv{Config: cfg}, "linux", gc, &GeoClue{}); err == nil || !strings.Contains(err.Error(), "ip_url") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestCurrentLocationIsAbsentWithoutASource: without ip_url, neither
// macOS (no CoreLocation without cgo) nor Linux without GeoClue has a
// source (Linux: here, no bus); the tool is not listed and get_status
// gives the sentence, while the geocoding tools stay.
func TestCurrentLocationIsAbsentWithoutASource(t *testing.T) {
	geoURL, gc, _ := world(t, `{}`)
	for _, goos := range []string{"darwin", "linux"} {
		t.Run(goos, func(t *testing.T) {
			cs := session(t, goos, geoURL, "", gc, "status")
			res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			got := strings.Join(names, " ")
			if strings.Contains(got, "location_get_current") || !strings.Contains(got, "location_geocode") || !strings.Contains(got, "location_reverse_geocode") {
				t.Fatalf("tools: %s", got)
			}
			_, text, _ := mcptest.Call(t, cs, "get_status", `{}`)
			want := Unavailable(goos, "no D-Bus system bus to ask GeoClue")
			if goos == "darwin" {
				want = Unavailable(goos, "")
			}
			if !strings.Contains(text, want) {
				t.Fatalf("get_status lacks %q:\n%s", want, text)
			}
		})
	}
}
