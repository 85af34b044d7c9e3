package location

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"
)

// GeoClue over D-Bus (Linux): the system service desktops use for the
// position, asked with the protocol of its Manager and Client interfaces —
// GetClient, set DesktopId and RequestedAccuracyLevel, Start, wait for
// LocationUpdated, read the Location object, Stop.
const (
	geoclueName     = "org.freedesktop.GeoClue2"
	geoclueManager  = dbus.ObjectPath("/org/freedesktop/GeoClue2/Manager")
	geoclueIface    = "org.freedesktop.GeoClue2"
	geoclueDesktop  = "tidings"
	geoclueAccuracy = uint32(6) // GCLUE_ACCURACY_LEVEL_STREET_LEVEL
	// GeoClueWait bounds the wait for a first fix (seed 002's 15 s).
	GeoClueWait = 15 * time.Second
)

// GeoClue is the GeoClue source on the system bus at Address ("" = the
// system bus: $DBUS_SYSTEM_BUS_ADDRESS or its default socket).
type GeoClue struct {
	Address string
	Wait    time.Duration
}

func (g *GeoClue) connect(ctx context.Context) (*dbus.Conn, error) {
	if g.Address == "" {
		return dbus.ConnectSystemBus(dbus.WithContext(ctx))
	}
	return dbus.Connect(g.Address, dbus.WithContext(ctx))
}

// Probe says why GeoClue cannot answer here ("" when it can): no system
// bus, or no GeoClue service on it (running or activatable). It is the
// cheap check made when the service is built.
func (g *GeoClue) Probe(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := g.connect(ctx)
	if err != nil {
		return "no D-Bus system bus to ask GeoClue"
	}
	defer conn.Close()
	bus := conn.BusObject()
	for _, m := range []string{"org.freedesktop.DBus.ListNames", "org.freedesktop.DBus.ListActivatableNames"} {
		var names []string
		if err := bus.CallWithContext(ctx, m, 0).Store(&names); err != nil {
			return "the D-Bus system bus does not answer"
		}
		for _, n := range names {
			if n == geoclueName {
				return ""
			}
		}
	}
	return "GeoClue is not installed on the D-Bus system bus (install geoclue-2.0)"
}

// Name implements Source.
func (g *GeoClue) Name() string { return "geoclue" }

// Endpoint implements Source.
func (g *GeoClue) Endpoint() string {
	if g.Address != "" {
		return g.Address
	}
	if a := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != "" {
		return a
	}
	return "system bus"
}

// Current implements Source.
func (g *GeoClue) Current(ctx context.Context) (Position, error) {
	wait := g.Wait
	if wait <= 0 {
		wait = GeoClueWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	conn, err := g.connect(ctx)
	if err != nil {
		return Position{}, errors.New("GeoClue could not be reached: no D-Bus system bus")
	}
	defer conn.Close()
	var client dbus.ObjectPath
	if err := conn.Object(geoclueName, geoclueManager).CallWithContext(ctx, geoclueIface+".Manager.GetClient", 0).Store(&client); err != nil {
		return Position{}, fmt.Errorf("GeoClue refused a client (%s)", dbusError(err))
	}
	obj := conn.Object(geoclueName, client)
	set := func(prop string, v any) error {
		return obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Set", 0, geoclueIface+".Client", prop, dbus.MakeVariant(v)).Err
	}
	if err := set("DesktopId", geoclueDesktop); err != nil {
		return Position{}, fmt.Errorf("GeoClue refused the client's settings (%s)", dbusError(err))
	}
	if err := set("RequestedAccuracyLevel", geoclueAccuracy); err != nil {
		return Position{}, fmt.Errorf("GeoClue refused the client's settings (%s)", dbusError(err))
	}
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(client), dbus.WithMatchInterface(geoclueIface+".Client"),
		dbus.WithMatchMember("LocationUpdated")); err != nil {
		return Position{}, fmt.Errorf("GeoClue: watch for the position: %w", err)
	}
	signals := make(chan *dbus.Signal, 4)
	conn.Signal(signals)
	if err := obj.CallWithContext(ctx, geoclueIface+".Client.Start", 0).Err; err != nil {
		return Position{}, fmt.Errorf("GeoClue did not start (%s): is location turned on and Tidings allowed in the desktop's privacy settings?", dbusError(err))
	}
	defer obj.Call(geoclueIface+".Client.Stop", 0) //nolint:errcheck // best effort; the connection closes anyway
	var loc dbus.ObjectPath
	for loc == "" {
		select {
		case <-ctx.Done():
			return Position{}, fmt.Errorf("GeoClue gave no position within %s", wait)
		case s := <-signals:
			if s == nil || s.Path != client || s.Name != geoclueIface+".Client.LocationUpdated" || len(s.Body) != 2 {
				continue
			}
			loc, _ = s.Body[1].(dbus.ObjectPath)
		}
	}
	lo := conn.Object(geoclueName, loc)
	var p Position
	for prop, dst := range map[string]*float64{"Latitude": &p.Latitude, "Longitude": &p.Longitude, "Accuracy": &p.AccuracyMeters} {
		v, err := lo.GetProperty(geoclueIface + ".Location." + prop)
		if err != nil {
			return Position{}, fmt.Errorf("GeoClue's position could not be read (%s)", dbusError(err))
		}
		f, ok := v.Value().(float64)
		if !ok {
			return Position{}, errors.New("GeoClue's position is not a number")
		}
		*dst = f
	}
	if v, err := lo.GetProperty(geoclueIface + ".Location.Description"); err == nil {
		p.Place, _ = v.Value().(string)
	}
	p.Source = g.Name()
	return p, nil
}

// dbusError names a D-Bus error by its name only (never its message text,
// which another process wrote).
func dbusError(err error) string {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name
	}
	var pe *dbus.Error
	if errors.As(err, &pe) {
		return pe.Name
	}
	return "no answer"
}
