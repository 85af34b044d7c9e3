package geocode

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

// Latitude and Longitude are the coordinate specs every tool taking a
// position reads its arguments with (docs/security.md, "Input coercion").
var (
	Latitude  = coerce.FloatSpec{Name: "latitude", Min: -90, Max: 90, Required: true}
	Longitude = coerce.FloatSpec{Name: "longitude", Min: -180, Max: 180, Required: true}
)

// Coordinates reads a latitude/longitude pair: both or neither (given
// reports which), each through coerce with its range.
func Coordinates(lat, lon coerce.Number) (la, lo float64, given bool, err error) {
	switch {
	case !lat.Given() && !lon.Given():
		return 0, 0, false, nil
	case lat.Given() != lon.Given():
		return 0, 0, false, errors.New("latitude and longitude go together: give both, or a place name instead")
	}
	if la, err = coerce.Float(lat, Latitude); err != nil {
		return 0, 0, false, err
	}
	if lo, err = coerce.Float(lon, Longitude); err != nil {
		return 0, 0, false, err
	}
	return la, lo, true, nil
}

// Locate turns a tool's position arguments into a place: a name is
// looked up (the best match), coordinates are taken as given (no reverse
// lookup: it would cost a second request for a label). Exactly one of the
// two must be given; an unknown name is an error sentence.
func (c *Client) Locate(ctx context.Context, place string, lat, lon coerce.Number) (Place, error) {
	la, lo, coords, err := Coordinates(lat, lon)
	if err != nil {
		return Place{}, err
	}
	place = strings.TrimSpace(place)
	switch {
	case coords && place != "":
		return Place{}, errors.New("give a place name or latitude and longitude, not both")
	case coords:
		return Place{Latitude: la, Longitude: lo}, nil
	case place == "":
		return Place{}, errors.New("give a place name (place) or latitude and longitude")
	}
	found, err := c.Search(ctx, place, 1)
	if err != nil {
		return Place{}, err
	}
	if len(found) == 0 {
		return Place{}, fmt.Errorf("the geocoder knows no place named %s: try another spelling, a larger town nearby, or latitude and longitude", Quote(place))
	}
	return found[0], nil
}

// Quote renders a caller's string for an error sentence: quoted and cut
// to 60 bytes.
func Quote(s string) string {
	const limit = 60
	if len(s) > limit {
		cut := limit
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}
