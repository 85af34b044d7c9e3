package imageview

import (
	"bytes"
	"encoding/binary"
	"image"
)

// Orientation returns the EXIF orientation (1–8) stored in an image file of
// the given format: a JPEG's APP1 Exif segment, a TIFF's first IFD, a
// WebP's EXIF chunk or a PNG's eXIf chunk. 1 (upright) when there is none
// or it is not valid. Cameras store the sensor's pixels and this tag; a
// viewer that ignores it shows a portrait photo lying on its side.
func Orientation(format string, data []byte) int {
	var tiffData []byte
	switch format {
	case "jpeg":
		tiffData = jpegExif(data)
	case "tiff":
		tiffData = data
	case "webp":
		tiffData = riffChunk(data, "EXIF")
	case "png":
		tiffData = pngChunk(data, "eXIf")
	}
	tiffData = bytes.TrimPrefix(tiffData, []byte("Exif\x00\x00"))
	if o := tiffOrientation(tiffData); o >= 1 && o <= 8 {
		return o
	}
	return 1
}

// jpegExif returns the TIFF payload of a JPEG's first APP1 Exif segment,
// looking only at the segments before the image data.
func jpegExif(b []byte) []byte {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return nil
		}
		marker := b[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01 {
			i += 2
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image
			return nil
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return nil
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:]
		}
		i += 2 + n
	}
	return nil
}

// riffChunk returns the payload of a WebP file's first chunk named id.
func riffChunk(b []byte, id string) []byte {
	for i := 12; i+8 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[i+4:]))
		if n < 0 || n > len(b)-i-8 {
			return nil
		}
		if string(b[i:i+4]) == id {
			return b[i+8 : i+8+n]
		}
		i += 8 + n + n&1
	}
	return nil
}

// pngChunk returns the payload of a PNG file's first chunk named id before
// the image data.
func pngChunk(b []byte, id string) []byte {
	for i := 8; i+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[i:]))
		if n < 0 || n > len(b)-i-12 {
			return nil
		}
		switch string(b[i+4 : i+8]) {
		case id:
			return b[i+8 : i+8+n]
		case "IDAT", "IEND":
			return nil
		}
		i += 12 + n
	}
	return nil
}

// tiffOrientation reads tag 0x0112 of a TIFF structure's first IFD; 0 when
// absent or malformed.
func tiffOrientation(b []byte) int {
	if len(b) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(b[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	if bo.Uint16(b[2:]) != 42 {
		return 0
	}
	off := int64(bo.Uint32(b[4:]))
	if off < 8 || off+2 > int64(len(b)) {
		return 0
	}
	count := int64(bo.Uint16(b[off:]))
	for k := int64(0); k < count; k++ {
		e := off + 2 + 12*k
		if e+12 > int64(len(b)) {
			return 0
		}
		if bo.Uint16(b[e:]) == 0x0112 && bo.Uint16(b[e+2:]) == 3 && bo.Uint32(b[e+4:]) == 1 {
			return int(bo.Uint16(b[e+8:]))
		}
	}
	return 0
}

// upright applies an EXIF orientation to a stored picture, returning the
// picture as it is meant to be seen (orientations 5–8 swap width and
// height).
func upright(src *image.RGBA, orient int) *image.RGBA {
	if orient <= 1 || orient > 8 {
		return src
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	W, H := w, h
	if orient >= 5 {
		W, H = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, W, H))
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			var sx, sy int
			switch orient {
			case 2: // mirrored
				sx, sy = w-1-x, y
			case 3: // turned 180°
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored vertically
				sx, sy = x, h-1-y
			case 5: // transposed
				sx, sy = y, x
			case 6: // turn 90° clockwise
				sx, sy = y, h-1-x
			case 7: // transversed
				sx, sy = w-1-y, h-1-x
			case 8: // turn 90° counter-clockwise
				sx, sy = w-1-y, x
			}
			si, di := src.PixOffset(sx, sy), dst.PixOffset(x, y)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
