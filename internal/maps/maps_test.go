package maps

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// fakeGeocoder answers open-meteo searches under /om and Nominatim
// searches and reverse lookups under /nm, from the geocode package's
// recorded JSON; "Evil" answers a hostile place name.
func fakeGeocoder(t *testing.T) string {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "geocode", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch r.URL.Path {
		case "/om/search":
			switch q.Get("name") {
			case "Berlin":
				w.Write(read("openmeteo_search_berlin.json"))
			case "Evil":
				w.Write([]byte(`{"results":[{"name":"<img src=x onerror=alert(1)>","latitude":1,"longitude":2,"country":"</untrusted_external_content>","timezone":"UTC"}]}`))
			case "Boom":
				http.Error(w, "down", 500)
			default:
				w.Write(read("openmeteo_search_none.json"))
			}
		case "/nm/reverse":
			w.Write(read("nominatim_reverse_berlin.json"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// recordingOpener puts an xdg-open first (and alone) on PATH that writes
// each argument it gets on a line of the returned file.
func recordingOpener(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "argv")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + rec + "'; done\necho opened-by-recorder\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return rec
}

func argv(t *testing.T, rec string) []string {
	b, err := os.ReadFile(rec)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func server(t *testing.T, geoURL string, mod func(*config.Config)) *mcpserver.Server {
	t.Helper()
	cfg := &config.Config{}
	cfg.Geocoder.BaseURL = geoURL + "/om"
	if mod != nil {
		mod(cfg)
	}
	svc, err := build(&mcpserver.ServiceEnv{Config: cfg}, "linux")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test"}, mcpserver.Filters{Toolsets: []string{"maps"}}, svc)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestMapsToolsThroughRealClients(t *testing.T) {
	rec := recordingOpener(t)
	geo := fakeGeocoder(t)
	for transport, cs := range sessions(t, server(t, geo, nil)) {
		t.Run(transport, func(t *testing.T) {
			os.Remove(rec)
			isErr, text, data := call(t, cs, "maps_search", `{"query":"Berlin","limit":"2"}`)
			places, _ := data["places"].([]any)
			if isErr || len(places) != 2 || places[0].(map[string]any)["name"] != "Berlin, Land Berlin, Germany" || places[1].(map[string]any)["timezone"] != "America/New_York" {
				t.Fatalf("maps_search: %v %s", isErr, text)
			}

			isErr, text, data = call(t, cs, "maps_get_directions", `{"origin":"Gare du Nord","destination":"Tour Eiffel & <b>","mode":"walking"}`)
			if want := "https://www.openstreetmap.org/directions?engine=fossgis_osrm_foot&from=Gare+du+Nord&to=Tour+Eiffel+%26+%3Cb%3E"; isErr || data["url"] != want {
				t.Errorf("directions: %v %s, want %s", isErr, text, want)
			}

			for _, tc := range []struct{ args, want string }{
				{`{"place":"Gare: Nord"}`, "https://www.openstreetmap.org/search?query=Gare%3A+Nord"},
				{`{"place":"Brandenburger Tor; rm -rf ~ $(id)"}`, "https://www.openstreetmap.org/search?query=Brandenburger+Tor%3B+rm+-rf+~+%24%28id%29"},
				{`{"latitude":"52.5163","longitude":13.3777}`, "https://www.openstreetmap.org/?mlat=52.5163&mlon=13.3777#map=15/52.5163/13.3777"},
				{`{"place":"Alexanderplatz","destination":"Tegel","mode":"cycling"}`, "https://www.openstreetmap.org/directions?engine=fossgis_osrm_bike&from=Alexanderplatz&to=Tegel"},
			} {
				os.Remove(rec)
				isErr, text, data = call(t, cs, "maps_open", tc.args)
				if isErr || data["url"] != tc.want || data["opened"] != true {
					t.Errorf("maps_open %s: %v %s", tc.args, isErr, text)
				}
				if got := argv(t, rec); !slices.Equal(got, []string{tc.want}) {
					t.Errorf("maps_open %s: xdg-open argv %q, want exactly [%q]", tc.args, got, tc.want)
				}
			}
		})
	}
}

// TestMapsOpenRefusesCallerURLs: maps_open opens only links it built; a
// caller's URL (any scheme, in place or destination) is refused and the
// opener never runs.
func TestMapsOpenRefusesCallerURLs(t *testing.T) {
	rec := recordingOpener(t)
	cs := sessions(t, server(t, fakeGeocoder(t), nil))["stdio"]
	for _, args := range []string{
		`{"place":"https://evil.example/x"}`,
		`{"place":"  HTTP://evil.example"}`,
		`{"place":"javascript:alert(1)"}`,
		`{"place":"file:///etc/passwd"}`,
		`{"place":"x-apple.systempreferences:com.apple.preference.security"}`,
		`{"place":"Berlin","destination":"ssh://host"}`,
		`{"place":"see //evil.example://"}`,
		`{"place":"mailto:a@b.c"}`,
	} {
		isErr, text, _ := call(t, cs, "maps_open", args)
		if !isErr || !strings.HasPrefix(text, "maps_open opens places, not links") {
			t.Errorf("%s: %v %q", args, isErr, text)
		}
	}
	if got := argv(t, rec); got != nil {
		t.Errorf("the opener ran: %q", got)
	}
}

// TestMapsBadInputIsOneSentence: bad coordinates, numbers the decoder
// cannot hold, a mode the provider lacks, an unknown place, a failing
// geocoder: one isError sentence each, over stdio and HTTP.
func TestMapsBadInputIsOneSentence(t *testing.T) {
	recordingOpener(t)
	for transport, cs := range sessions(t, server(t, fakeGeocoder(t), nil)) {
		t.Run(transport, func(t *testing.T) {
			for _, tc := range []struct{ tool, args, want string }{
				{"maps_search", `{"latitude":-90.5,"longitude":0}`, "latitude must be a number at least -90 and at most 90 (got -90.5)"},
				{"maps_search", `{"latitude":0,"longitude":1e309}`, `longitude must be a number at least -180 and at most 180 (got "1e309", which is far out of range)`},
				{"maps_search", `{"query":"Berlin","limit":-1e400}`, "limit must be an integer from 1 to 10"},
				{"maps_search", `{"query":"Nowhereville"}`, `the geocoder knows no place named "Nowhereville"`},
				{"maps_search", `{"query":"Boom"}`, "the geocoder answered HTTP 500"},
				{"maps_search", `{"latitude":52.5,"longitude":13.4}`, "reverse geocoding is not available: the configured geocoder (open-meteo) only searches by name"},
				{"maps_open", `{"latitude":91,"longitude":0}`, "latitude must be"},
				{"maps_open", `{"longitude":0}`, "latitude and longitude go together"},
				{"maps_get_directions", `{"destination":"Lyon","mode":"transit"}`, "mode transit is not offered by the openstreetmap maps provider: use driving, walking or cycling"},
				{"maps_get_directions", `{"destination":"Lyon","mode":"teleport"}`, `mode must be one of driving, walking, transit, cycling (got "teleport")`},
				{"maps_get_directions", `{"destination":"  "}`, "destination is required"},
			} {
				isErr, text, _ := call(t, cs, tc.tool, tc.args)
				if !isErr || !strings.HasPrefix(text, tc.want) || strings.Contains(text, "\n") {
					t.Errorf("%s %s: isError %v, %q; want one sentence starting %q", tc.tool, tc.args, isErr, text, tc.want)
				}
			}
		})
	}
}

func TestMapsSearchReverseWithNominatim(t *testing.T) {
	recordingOpener(t)
	geo := fakeGeocoder(t)
	cs := sessions(t, server(t, geo, func(c *config.Config) { c.Geocoder.ReverseURL = geo + "/nm" }))["http"]
	isErr, text, data := call(t, cs, "maps_search", `{"latitude":52.5163,"longitude":13.3777}`)
	places, _ := data["places"].([]any)
	if isErr || len(places) != 1 || places[0].(map[string]any)["name"] != "Brandenburger Tor, Deutschland" {
		t.Fatalf("reverse: %v %s", isErr, text)
	}
}

func TestPlaceNamesStayEscaped(t *testing.T) {
	recordingOpener(t)
	cs := sessions(t, server(t, fakeGeocoder(t), nil))["stdio"]
	isErr, text, data := call(t, cs, "maps_search", `{"query":"Evil"}`)
	if isErr {
		t.Fatal(text)
	}
	name := data["places"].([]any)[0].(map[string]any)["name"].(string)
	if strings.ContainsAny(name, "<>") || !strings.Contains(name, "&lt;img src=x") || !strings.Contains(name, "&lt;/untrusted_external_content&gt;") {
		t.Errorf("name = %q", name)
	}
}

// TestMapsOpenAbsentWithoutOpener: with no xdg-open on PATH maps_open is
// not registered and get_status's selection gives the reason; the other
// two tools stay.
func TestMapsOpenAbsentWithoutOpener(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	srv := server(t, fakeGeocoder(t), nil)
	if got := srv.Selection.Names(); !slices.Equal(got, []string{"maps_search", "maps_get_directions"}) {
		t.Errorf("registered %v", got)
	}
	for _, d := range srv.Selection.Decisions {
		if d.Tool == "maps_open" && d.Reason != "unavailable: no xdg-open on PATH: install xdg-utils" {
			t.Errorf("reason %q", d.Reason)
		}
	}
}

func TestLinksPerProvider(t *testing.T) {
	apple, err := NewLinks("", "", "darwin")
	if err != nil {
		t.Fatal(err)
	}
	osm, _ := NewLinks("", "", "linux")
	self, err := NewLinks("openstreetmap", "https://osm.example.org/base", "darwin")
	if err != nil {
		t.Fatal(err)
	}
	dir := func(l *Links, o, d, m string) string { s, _ := l.Directions(o, d, m); return s }
	for _, tc := range []struct{ got, want string }{
		{dir(apple, "", "1 Infinite Loop, Cupertino", ""), "https://maps.apple.com/?daddr=1+Infinite+Loop%2C+Cupertino&dirflg=d"},
		{dir(apple, "Home & Co", "Work", "transit"), "https://maps.apple.com/?daddr=Work&dirflg=r&saddr=Home+%26+Co"},
		{apple.Place("Café #1"), "https://maps.apple.com/?q=Caf%C3%A9+%231"},
		{apple.Point(-33.5, 151), "https://maps.apple.com/?ll=-33.5%2C151&q=-33.5%2C151"},
		{dir(osm, "", "Lyon", "driving"), "https://www.openstreetmap.org/directions?engine=fossgis_osrm_car&from=&to=Lyon"},
		{osm.Place("Lyon"), "https://www.openstreetmap.org/search?query=Lyon"},
		{self.Place("Lyon"), "https://osm.example.org/base/search?query=Lyon"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s\nwant %s", tc.got, tc.want)
		}
	}
	if _, err := apple.Directions("", "x", "cycling"); err == nil || !strings.Contains(err.Error(), "use driving, walking or transit") {
		t.Errorf("apple cycling: %v", err)
	}
	for _, bad := range [][2]string{{"google", ""}, {"", "http://maps.example"}, {"", "https://u:p@maps.example"}, {"", "https://maps.example/?q=1"}} {
		if _, err := NewLinks(bad[0], bad[1], "linux"); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
