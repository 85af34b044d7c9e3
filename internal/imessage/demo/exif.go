package demo

import (
	"bytes"
	"encoding/binary"
	"math"
)

// JPEGWithExif returns jpeg with an APP1 Exif segment inserted after its
// start marker, holding the orientation tag and a GPS position, the way a
// phone camera stores a portrait photo: the sensor's landscape pixels plus
// "turn this" (orientation 6 = turn 90° clockwise) and where it was taken.
// The demo uses it for a photo whose upright view and stripped metadata
// get_attachment must get right; tests use it to build such files.
func JPEGWithExif(jpeg []byte, orientation int, lat, lon float64) []byte {
	le := binary.LittleEndian
	var t bytes.Buffer
	w16 := func(v uint16) { binary.Write(&t, le, v) }
	w32 := func(v uint32) { binary.Write(&t, le, v) }
	entry := func(tag, typ uint16, count, value uint32) { w16(tag); w16(typ); w32(count); w32(value) }
	// TIFF header, IFD0 at 8 with two entries (orientation, GPS IFD
	// pointer), the GPS IFD right after it, then its rationals.
	t.WriteString("II")
	w16(42)
	w32(8)
	const ifd0 = 8
	const gpsIFD = ifd0 + 2 + 2*12 + 4
	const gpsEntries = 4
	const rationals = gpsIFD + 2 + gpsEntries*12 + 4
	w16(2)
	entry(0x0112, 3, 1, uint32(orientation)) // SHORT, left-justified in the value field (little-endian)
	entry(0x8825, 4, 1, gpsIFD)
	w32(0)
	w16(gpsEntries)
	ref := func(v float64, pos, neg byte) uint32 {
		if v < 0 {
			return uint32(neg)
		}
		return uint32(pos)
	}
	entry(0x0001, 2, 2, ref(lat, 'N', 'S'))
	entry(0x0002, 5, 3, rationals)
	entry(0x0003, 2, 2, ref(lon, 'E', 'W'))
	entry(0x0004, 5, 3, rationals+24)
	w32(0)
	for _, v := range []float64{math.Abs(lat), math.Abs(lon)} {
		deg := math.Floor(v)
		min := math.Floor((v - deg) * 60)
		sec := ((v-deg)*60 - min) * 60
		for _, r := range [][2]uint32{{uint32(deg), 1}, {uint32(min), 1}, {uint32(sec * 100), 100}} {
			w32(r[0])
			w32(r[1])
		}
	}
	payload := append([]byte("Exif\x00\x00"), t.Bytes()...)
	seg := []byte{0xFF, 0xE1, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}
	out := append([]byte{}, jpeg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpeg[2:]...)
}
