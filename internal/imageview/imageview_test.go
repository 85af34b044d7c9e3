package imageview_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tidings-mcp/tidings/internal/imageview"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// heicFile is the demo's committed HEIC photo (480×360, red square at the
// top-left corner).
func heicFile(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "imessage", "demo", "assets", "IMG_5120.heic"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noisy draws a w×h picture of random pixels: the worst case for every
// encoder, so byte budgets are really exercised.
func noisy(w, h int) *image.RGBA {
	r := rand.New(rand.NewPCG(1, 2))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

func encJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encPNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// marked draws a w×h grey picture with a red square of side m at its
// top-left corner.
func marked(w, h, m int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{128, 128, 128, 255}
			if x < m && y < m {
				c = color.RGBA{230, 20, 20, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func isRed(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 > 180 && g>>8 < 90 && b>>8 < 90
}

func decode(t testing.TB, res imageview.Result) image.Image {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatalf("result does not decode: %v", err)
	}
	if "image/"+format != res.MimeType {
		t.Fatalf("result is %s, says %s", format, res.MimeType)
	}
	if img.Bounds().Dx() != res.Width || img.Bounds().Dy() != res.Height {
		t.Fatalf("result is %v, says %d×%d", img.Bounds(), res.Width, res.Height)
	}
	return img
}

// TestEachSizeStaysWithinItsPixelAndByteBudget renders large, hard to
// compress pictures at every size: the long side and the bytes stay in the
// size's budget, by stepping quality and then pixels down.
func TestEachSizeStaysWithinItsPixelAndByteBudget(t *testing.T) {
	photo := encJPEG(t, noisy(2400, 1800))
	screenshot := encPNG(t, noisy(1200, 2600))
	for _, src := range []struct {
		name string
		data []byte
		w, h int
	}{{"noisy photo", photo, 2400, 1800}, {"noisy screenshot", screenshot, 1200, 2600}} {
		for _, size := range imageview.Sizes {
			res, err := imageview.Render(src.data, imageview.Options{Size: size})
			if err != nil {
				t.Fatalf("%s at %s: %v", src.name, size, err)
			}
			b := imageview.Budgets[size]
			if len(res.Data) > b.Bytes {
				t.Errorf("%s at %s: %d bytes, budget %d", src.name, size, len(res.Data), b.Bytes)
			}
			if b.LongSide > 0 && max(res.Width, res.Height) > b.LongSide {
				t.Errorf("%s at %s: %d×%d, long side budget %d", src.name, size, res.Width, res.Height, b.LongSide)
			}
			if res.Width*src.h > (res.Height+1)*src.w || (res.Width+1)*src.h < res.Height*src.w {
				t.Errorf("%s at %s: %d×%d does not keep the %d×%d aspect", src.name, size, res.Width, res.Height, src.w, src.h)
			}
			decode(t, res)
		}
	}
	// A small picture is never enlarged.
	res, err := imageview.Render(encJPEG(t, marked(120, 80, 10)), imageview.Options{Size: imageview.Large})
	if err != nil || res.Width != 120 || res.Height != 80 {
		t.Errorf("small picture at large: %d×%d, %v", res.Width, res.Height, err)
	}
}

// TestEveryDecoderRenders: each supported format decodes and comes back as
// JPEG (photos) or PNG (transparency, lossless sources).
func TestEveryDecoderRenders(t *testing.T) {
	alpha := image.NewNRGBA(image.Rect(0, 0, 50, 40))
	for i := 3; i < len(alpha.Pix); i += 8 {
		alpha.Pix[i] = 200
	}
	var tiffB, bmpB, gifB bytes.Buffer
	if err := tiff.Encode(&tiffB, marked(64, 48, 8), nil); err != nil {
		t.Fatal(err)
	}
	if err := bmp.Encode(&bmpB, marked(64, 48, 8)); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifB, marked(64, 48, 8), nil); err != nil {
		t.Fatal(err)
	}
	webpB, err := os.ReadFile(filepath.Join("testdata", "blue-purple-pink.lossy.webp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, format, mime string
		data               []byte
	}{
		{"jpeg photo", "jpeg", "image/jpeg", encJPEG(t, marked(64, 48, 8))},
		{"png screenshot", "png", "image/png", encPNG(t, marked(64, 48, 8))},
		{"png with transparency", "png", "image/png", encPNG(t, alpha)},
		{"gif", "gif", "image/png", gifB.Bytes()},
		{"tiff", "tiff", "image/jpeg", tiffB.Bytes()},
		{"bmp", "bmp", "image/png", bmpB.Bytes()},
		{"webp", "webp", "image/jpeg", webpB},
	} {
		res, err := imageview.Render(tt.data, imageview.Options{Size: imageview.Preview})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if res.Source != tt.format || res.MimeType != tt.mime {
			t.Errorf("%s: source %s → %s, want %s → %s", tt.name, res.Source, res.MimeType, tt.format, tt.mime)
		}
		img := decode(t, res)
		if tt.name == "png with transparency" {
			if _, _, _, a := img.At(1, 0).RGBA(); a == 0xffff {
				t.Errorf("%s: transparency lost", tt.name)
			}
		}
	}
}

// TestHEICDecodes: the iPhone's format decodes to its real pixels (the
// red square stays at the top-left corner), at its own size.
func TestHEICDecodes(t *testing.T) {
	res, err := imageview.Render(heicFile(t), imageview.Options{Size: imageview.Large})
	if !imageview.HEIC { // built with tidings_noheic: an honest error naming the format
		var fe *imageview.FormatError
		if !errors.As(err, &fe) || fe.Format != "heic" || !errors.Is(err, imageview.ErrUnknownFormat) {
			t.Fatalf("without a HEIC decoder: err = %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "heic" || res.Width != 480 || res.Height != 360 || res.MimeType != "image/jpeg" {
		t.Fatalf("heic rendered as %+v", res)
	}
	img := decode(t, res)
	if !isRed(img.At(20, 20)) || isRed(img.At(460, 20)) || isRed(img.At(20, 340)) {
		t.Errorf("heic pixels: top-left %v, top-right %v, bottom-left %v", img.At(20, 20), img.At(460, 20), img.At(20, 340))
	}
}

// TestExifOrientationIsApplied: a picture stored sideways with an
// orientation tag comes back upright, for all eight orientations: the red
// square of the stored top-left corner lands where that orientation puts
// it.
func TestExifOrientationIsApplied(t *testing.T) {
	const w, h, m = 120, 80, 20
	stored := encJPEG(t, marked(w, h, m))
	// Where the stored top-left corner appears in the upright picture.
	corner := map[int][2]bool{ // {right, bottom}
		1: {false, false}, 2: {true, false}, 3: {true, true}, 4: {false, true},
		5: {false, false}, 6: {true, false}, 7: {true, true}, 8: {false, true},
	}
	for o := 1; o <= 8; o++ {
		res, err := imageview.Render(demo.JPEGWithExif(stored, o, 0, 0), imageview.Options{Size: imageview.Large})
		if err != nil {
			t.Fatalf("orientation %d: %v", o, err)
		}
		W, H := w, h
		if o >= 5 {
			W, H = h, w
		}
		if res.Width != W || res.Height != H {
			t.Errorf("orientation %d: %d×%d, want %d×%d", o, res.Width, res.Height, W, H)
		}
		img := decode(t, res)
		x, y := m/2, m/2
		if corner[o][0] {
			x = W - 1 - m/2
		}
		if corner[o][1] {
			y = H - 1 - m/2
		}
		if !isRed(img.At(x, y)) {
			t.Errorf("orientation %d: the marked corner is not at (%d,%d) of %d×%d", o, x, y, W, H)
		}
		if want := map[bool]int{true: 0, false: o}[o == 1]; res.Orientation != want {
			t.Errorf("orientation %d reported as %d", o, res.Orientation)
		}
	}
}

// segments lists a JPEG's marker segments before the scan data.
func segments(t testing.TB, b []byte) []byte {
	t.Helper()
	var out []byte
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			t.Fatalf("not a marker at %d", i)
		}
		out = append(out, b[i+1])
		if b[i+1] == 0xDA {
			return out
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
	return out
}

// TestMetadataIsStripped: a JPEG carrying GPS in its Exif comes back
// without any APPn segment (so no Exif, no GPS, no XMP), and a PNG result
// holds only the chunks that carry pixels.
func TestMetadataIsStripped(t *testing.T) {
	in := demo.JPEGWithExif(encJPEG(t, marked(64, 48, 8)), 1, 37.9235, -122.5965)
	if !bytes.Contains(in, []byte("Exif\x00\x00")) || !slicesContains(segments(t, in), 0xE1) {
		t.Fatal("the test input has no Exif APP1 segment")
	}
	for _, size := range imageview.Sizes {
		res, err := imageview.Render(in, imageview.Options{Size: size})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segments(t, res.Data) {
			if s >= 0xE0 && s <= 0xEF || s == 0xFE {
				t.Errorf("%s: result keeps marker FF%02X (application data or comment)", size, s)
			}
		}
		if bytes.Contains(res.Data, []byte("Exif")) {
			t.Errorf("%s: result contains Exif", size)
		}
	}
	// PNG: only IHDR, PLTE, tRNS, IDAT, IEND.
	res, err := imageview.Render(pngWithText(t, encPNG(t, marked(64, 48, 8))), imageview.Options{Size: imageview.Preview})
	if err != nil || res.MimeType != "image/png" {
		t.Fatalf("png: %v %s", err, res.MimeType)
	}
	for i := 8; i+12 <= len(res.Data); {
		n := int(binary.BigEndian.Uint32(res.Data[i:]))
		switch typ := string(res.Data[i+4 : i+8]); typ {
		case "IHDR", "PLTE", "tRNS", "IDAT", "IEND":
		default:
			t.Errorf("png result keeps chunk %s", typ)
		}
		i += 12 + n
	}
}

// pngWithText inserts a tEXt chunk (where tools put locations and
// comments) after a PNG's IHDR.
func pngWithText(t testing.TB, b []byte) []byte {
	t.Helper()
	data := []byte("Comment\x00taken at 37.9235,-122.5965")
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(append([]byte("tEXt"), data...)))
	ihdrEnd := 8 + 12 + 13
	return append(append(append([]byte{}, b[:ihdrEnd]...), chunk...), b[ihdrEnd:]...)
}

func slicesContains(s []byte, v byte) bool { return bytes.IndexByte(s, v) >= 0 }

// TestDecompressionBombIsRefusedBeforeDecoding: files that declare huge
// pictures are refused from their header, before the pixels are
// allocated (decoding any of them would need gigabytes).
func TestDecompressionBombIsRefusedBeforeDecoding(t *testing.T) {
	bigPNG := pngHeader(100_000, 100_000)
	bigGIF := []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00\xff\xff\xff\xff\x00\x02\x02D\x01\x00;")
	bigJPEG := jpegHeader(60_000, 60_000)
	for _, tt := range []struct {
		name string
		data []byte
		max  int64
	}{
		{"png 100000×100000", bigPNG, 0},
		{"gif 65535×65535", bigGIF, 0},
		{"jpeg 60000×60000", bigJPEG, 0},
		{"png just above a lower cap", pngHeader(1001, 1000), 1_000_000},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := imageview.Render(tt.data, imageview.Options{Size: imageview.Preview, MaxPixels: tt.max})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, imageview.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", tt.name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
			t.Errorf("%s: %d bytes allocated before refusing", tt.name, grew)
		}
	}
}

// pngHeader is a PNG signature and IHDR declaring w×h RGBA, and nothing
// else.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, "IHDR"...)
	b = append(b, ihdr...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...)))
	return b
}

// jpegHeader is a baseline JPEG's frame header declaring w×h and an empty
// scan.
func jpegHeader(w, h uint16) []byte {
	b := []byte{0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 1, 1, 0x11, 0}
	b = append(b, 0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0) // start of scan: where the pixels would begin
	return append(b, 0xFF, 0xD9)
}

// TestFormatsThatCannotBeShownSayWhatTheyAre: unknown bytes, AVIF, and a
// known format whose bytes are broken are errors that name the format.
func TestFormatsThatCannotBeShownSayWhatTheyAre(t *testing.T) {
	good := encJPEG(t, marked(64, 48, 8))
	for _, tt := range []struct {
		name   string
		data   []byte
		format string
		want   error
	}{
		{"pdf", []byte("%PDF-1.7\n1 0 obj\n"), "", imageview.ErrUnknownFormat},
		{"empty", nil, "", imageview.ErrUnknownFormat},
		{"avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"), "avif", imageview.ErrUnknownFormat},
		{"truncated jpeg", good[:len(good)/2], "jpeg", imageview.ErrUndecodable},
		{"heic header only", heicFile(t)[:64], "heic", map[bool]error{true: imageview.ErrUndecodable, false: imageview.ErrUnknownFormat}[imageview.HEIC]},
	} {
		_, err := imageview.Render(tt.data, imageview.Options{Size: imageview.Preview})
		var fe *imageview.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, tt.want) || fe.Format != tt.format {
			t.Errorf("%s: err = %v, want %v for format %q", tt.name, err, tt.want, tt.format)
		}
	}
}

// TestViewableByTypeOrName pins which attachment types history and search
// mark viewable.
func TestViewableByTypeOrName(t *testing.T) {
	for _, tt := range []struct {
		mime, name string
		want       bool
	}{
		{"image/jpeg", "", true}, {"image/heic", "IMG_1.HEIC", true}, {"IMAGE/PNG", "", true}, {"image/tiff", "", true},
		{"image/webp", "", true}, {"image/gif", "", true}, {"", "IMG_2.HEIC", true}, {"", "scan.tif", true},
		{"image/svg+xml", "", false}, {"image/avif", "", false}, {"application/pdf", "photo.jpg", false},
		{"video/quicktime", "", false}, {"", "notes.txt", false}, {"", "", false},
	} {
		if got := imageview.Viewable(tt.mime, tt.name); got != tt.want {
			t.Errorf("Viewable(%q, %q) = %v", tt.mime, tt.name, got)
		}
	}
}

// FuzzRender: no input makes Render panic, hang on a bounded input, or
// return a result outside its budget.
func FuzzRender(f *testing.F) {
	f.Add(encJPEG(f, marked(32, 24, 4)))
	f.Add(encPNG(f, marked(32, 24, 4)))
	f.Add(demo.JPEGWithExif(encJPEG(f, marked(32, 24, 4)), 6, 1, 2))
	f.Add(pngHeader(100_000, 100_000))
	f.Add(jpegHeader(40, 30))
	f.Add([]byte("RIFF\x10\x00\x00\x00WEBPVP8L"))
	f.Add([]byte("II*\x00\x08\x00\x00\x00"))
	f.Add(heicFile(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := imageview.Render(data, imageview.Options{Size: imageview.Preview, MaxPixels: 4_000_000})
		if err != nil {
			return
		}
		if len(res.Data) > imageview.Budgets[imageview.Preview].Bytes || max(res.Width, res.Height) > 400 {
			t.Fatalf("result outside the preview budget: %d bytes, %d×%d", len(res.Data), res.Width, res.Height)
		}
	})
}
