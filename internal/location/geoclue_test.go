//go:build unix

package location

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"

	"github.com/tidings-mcp/tidings/internal/geocode"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
)

// privateBus starts a dbus-daemon of the test's own on a socket in a
// temporary folder (never the machine's buses) and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dbus-daemon is not installed: ./scripts/system-packages installs dbus-daemon")
		}
		t.Skip("dbus-daemon is not installed (./scripts/system-packages installs dbus-daemon)")
	}
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(bin, "--session", "--nofork", "--nopidfile", "--print-address", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon gave no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// fakeGeoClue owns org.freedesktop.GeoClue2 on the bus at addr and plays
// its protocol: GetClient returns a client whose Start emits
// LocationUpdated with a Location object. It records what the client set.
type fakeGeoClue struct {
	mu        sync.Mutex
	desktopID string
	accuracy  uint32
	started   bool
	stopped   bool
	silent    bool // never send LocationUpdated
}

const clientPath = dbus.ObjectPath("/org/freedesktop/GeoClue2/Client/1")
const locPath = dbus.ObjectPath("/org/freedesktop/GeoClue2/Location/1")

type manager struct{}

func (manager) GetClient() (dbus.ObjectPath, *dbus.Error) { return clientPath, nil }

type client struct {
	f    *fakeGeoClue
	conn *dbus.Conn
	p    *prop.Properties
}

func (c *client) Start() *dbus.Error {
	c.f.mu.Lock()
	c.f.started = true
	c.f.desktopID, _ = c.p.GetMust(geoclueIface+".Client", "DesktopId").(string)
	c.f.accuracy, _ = c.p.GetMust(geoclueIface+".Client", "RequestedAccuracyLevel").(uint32)
	silent := c.f.silent
	c.f.mu.Unlock()
	if !silent {
		go c.conn.Emit(clientPath, geoclueIface+".Client.LocationUpdated", dbus.ObjectPath("/"), locPath)
	}
	return nil
}

func (c *client) Stop() *dbus.Error {
	c.f.mu.Lock()
	c.f.stopped = true
	c.f.mu.Unlock()
	return nil
}

func serveGeoClue(t *testing.T, addr string, f *fakeGeoClue) {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(conn.Export(manager{}, geoclueManager, geoclueIface+".Manager"))
	cp, err := prop.Export(conn, clientPath, prop.Map{geoclueIface + ".Client": {
		"DesktopId":              {Value: "", Writable: true, Emit: prop.EmitFalse},
		"RequestedAccuracyLevel": {Value: uint32(0), Writable: true, Emit: prop.EmitFalse},
	}})
	must(err)
	must(conn.Export(&client{f: f, conn: conn, p: cp}, clientPath, geoclueIface+".Client"))
	_, err = prop.Export(conn, locPath, prop.Map{geoclueIface + ".Location": {
		"Latitude":    {Value: 52.52, Emit: prop.EmitFalse},
		"Longitude":   {Value: 13.405, Emit: prop.EmitFalse},
		"Accuracy":    {Value: 25.0, Emit: prop.EmitFalse},
		"Description": {Value: "Alexanderplatz <wifi>", Emit: prop.EmitFalse},
	}})
	must(err)
	reply, err := conn.RequestName(geoclueName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", geoclueName, reply, err)
	}
}

// TestGeoClueOverDBus: against a GeoClue on the test's own bus, the probe
// passes, the client sets DesktopId and the accuracy before Start, the
// position comes from the Location object LocationUpdated names, and the
// client is stopped; through the tool the description stays escaped.
func TestGeoClueOverDBus(t *testing.T) {
	addr := privateBus(t)
	g := &GeoClue{Address: addr}
	if why := g.Probe(context.Background()); !strings.Contains(why, "GeoClue is not installed") {
		t.Fatalf("probe without GeoClue: %q", why)
	}
	f := &fakeGeoClue{}
	serveGeoClue(t, addr, f)
	if why := g.Probe(context.Background()); why != "" {
		t.Fatalf("probe: %q", why)
	}
	p, err := g.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Latitude != 52.52 || p.Longitude != 13.405 || p.AccuracyMeters != 25 || p.Place != "Alexanderplatz <wifi>" || p.Source != "geoclue" {
		t.Fatalf("position %+v", p)
	}
	f.mu.Lock()
	if f.desktopID != "tidings" || f.accuracy != geoclueAccuracy || !f.started || !f.stopped {
		t.Fatalf("client settings %+v", f)
	}
	f.mu.Unlock()

	geoURL, _, _ := world(t, `{}`)
	geo, err := geocode.New(geocode.Config{Kind: "nominatim", BaseURL: geoURL}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test"}, mcpserver.Filters{Toolsets: []string{"location"}}, Service(g, "", geo))
	if err != nil {
		t.Fatal(err)
	}
	isErr, text, data := mcptest.Call(t, mcptest.Sessions(t, srv)["stdio"], "location_get_current", `{}`)
	if isErr || data["place"] != "Alexanderplatz &lt;wifi&gt;" || data["accuracy_meters"] != 25.0 || data["source"] != "geoclue" {
		t.Fatalf("tool: %v %s %v", isErr, text, data)
	}
}

// TestGeoClueWithoutAFixIsAnError: a GeoClue that never reports a
// position ends the call at the wait with one sentence.
func TestGeoClueWithoutAFixIsAnError(t *testing.T) {
	addr := privateBus(t)
	serveGeoClue(t, addr, &fakeGeoClue{silent: true})
	_, err := (&GeoClue{Address: addr, Wait: 200 * time.Millisecond}).Current(context.Background())
	if err == nil || !strings.Contains(err.Error(), "GeoClue gave no position within 200ms") {
		t.Fatalf("err = %v", err)
	}
}
