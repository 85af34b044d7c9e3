// Package imageview turns an image attachment's bytes into a picture a model
// can look at: decoded (JPEG, PNG, GIF, TIFF, WebP, BMP, HEIC/HEIF), turned
// upright by its EXIF orientation, scaled into a size's pixel budget and
// re-encoded as JPEG or PNG within that size's byte budget
// (docs/tools.md, get_attachment). Re-encoding from pixels is also what
// strips every piece of metadata (GPS position, camera, dates): nothing of
// the original file but its pixels leaves (docs/security.md).
//
// The package is pure: bytes in, bytes out, no files, no MCP.
package imageview

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/bmp"
	"golang.org/x/image/draw"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// Size names one of get_attachment's sizes.
type Size string

// The sizes of docs/tools.md (get_attachment).
const (
	Preview Size = "preview"
	Large   Size = "large"
	Full    Size = "full"
)

// Budget is a size's limits: the longest side in pixels (0: the picture's
// own) and the encoded bytes. Budgets are decimal (100 KB = 100,000 bytes),
// the stricter reading of the limits clients publish.
type Budget struct {
	LongSide int
	Bytes    int
}

// Budgets are the limits of each size.
var Budgets = map[Size]Budget{
	Preview: {LongSide: 400, Bytes: 100_000},
	Large:   {LongSide: 1568, Bytes: 750_000},
	Full:    {LongSide: 0, Bytes: 3_500_000},
}

// Sizes lists the sizes in increasing order.
var Sizes = []Size{Preview, Large, Full}

// DefaultMaxPixels bounds width×height of a picture that is decoded at
// all: a decoded picture takes 4 bytes a pixel, and the dimensions are
// read from the header before anything is allocated, so a small file that
// declares a huge picture (a decompression bomb) is refused cheaply.
const DefaultMaxPixels = 80_000_000

// Options are Render's settings.
type Options struct {
	Size Size
	// MaxPixels bounds the source picture (0: DefaultMaxPixels).
	MaxPixels int64
}

// Result is a rendered picture.
type Result struct {
	Data     []byte `json:"data"`
	MimeType string `json:"mime_type"` // image/jpeg or image/png
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	// Source is the decoded file's format ("jpeg", "heic", …) and its
	// pixel size as stored (before orientation).
	Source       string `json:"source_format"`
	SourceWidth  int    `json:"source_width"`
	SourceHeight int    `json:"source_height"`
	// Orientation is the EXIF orientation applied (1 = none).
	Orientation int `json:"orientation,omitempty"`
	// Quality is the JPEG quality used (0 for PNG).
	Quality int `json:"quality,omitempty"`
}

// Errors Render returns; callers turn them into one sentence each.
var (
	// ErrUnknownFormat: the bytes are no image format this package knows.
	ErrUnknownFormat = errors.New("not an image format that can be shown")
	// ErrTooLarge: the declared dimensions exceed MaxPixels (or are not
	// positive); nothing was decoded.
	ErrTooLarge = errors.New("image dimensions exceed the decode limit")
	// ErrUndecodable: the format is known but these bytes do not decode.
	ErrUndecodable = errors.New("image does not decode")
)

// FormatError carries the sniffed format with one of the errors above.
type FormatError struct {
	Format        string // "jpeg", "heic", "avif", "" when unknown
	Width, Height int    // declared dimensions, when known
	Err           error
}

func (e *FormatError) Error() string {
	if e.Format == "" {
		return e.Err.Error()
	}
	return e.Format + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// HEIC reports whether this build decodes HEIC/HEIF (the build tag
// tidings_noheic leaves the decoder out; see docs/dependencies.md).
var HEIC = false

// heifBrands are the ISO BMFF major brands of HEIF stills coded with HEVC,
// which the bundled decoder reads.
var heifBrands = map[string]bool{"heic": true, "heix": true, "heim": true, "heis": true, "hevc": true, "hevx": true, "mif1": true, "msf1": true}

// Sniff names the format of data by its signature: jpeg, png, gif, tiff,
// webp, bmp, heic, avif, or "" when none matches.
func Sniff(data []byte) string {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return "jpeg"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "gif"
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return "tiff"
	case len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	case len(data) >= 14 && data[0] == 'B' && data[1] == 'M':
		return "bmp"
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		brand := string(data[8:12])
		switch {
		case brand == "avif" || brand == "avis":
			return "avif"
		case heifBrands[brand]:
			return "heic"
		}
	}
	return ""
}

// Viewable reports whether an attachment of this MIME type (or, when the
// type is empty, file name) is a picture Render can decode: what history
// and search mark as `viewable`. It decides by type alone, without the
// file, so a viewable attachment can still fail later (not downloaded,
// corrupt).
func Viewable(mime, filename string) bool {
	mime = strings.ToLower(strings.TrimSpace(mime))
	if mime == "" {
		name := strings.ToLower(filename)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			mime = extMIME[name[i:]]
		}
	}
	return viewableMIME[mime]
}

var viewableMIME = map[string]bool{
	"image/jpeg": true, "image/jpg": true, "image/pjpeg": true, "image/png": true, "image/gif": true,
	"image/tiff": true, "image/webp": true, "image/bmp": true, "image/x-ms-bmp": true,
	"image/heic": true, "image/heif": true, "image/heic-sequence": false,
}

var extMIME = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".tif": "image/tiff",
	".tiff": "image/tiff", ".webp": "image/webp", ".bmp": "image/bmp", ".heic": "image/heic", ".heif": "image/heif",
}

// Render decodes data, applies its orientation, fits it into the size's
// pixel budget and encodes it within the byte budget: JPEG for photos,
// PNG for pictures with transparency and, when it fits, for lossless
// sources (PNG, GIF, BMP: screenshots and drawings). When the first
// encoding is too large it steps the JPEG quality down, then the pixel
// size, until it fits.
//
// The declared dimensions are checked against MaxPixels before any pixel
// is decoded (image.DecodeConfig, or the HEIF header), so a decompression
// bomb costs a header read.
func Render(data []byte, o Options) (Result, error) {
	budget, ok := Budgets[o.Size]
	if !ok {
		return Result{}, fmt.Errorf("imageview: unknown size %q", o.Size)
	}
	maxPixels := o.MaxPixels
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	format := Sniff(data)
	dec, ok := decoders[format]
	if !ok {
		return Result{}, &FormatError{Format: format, Err: ErrUnknownFormat}
	}
	cfg, err := dec.config(bytes.NewReader(data))
	if err != nil {
		return Result{}, &FormatError{Format: format, Err: ErrUndecodable}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return Result{}, &FormatError{Format: format, Width: cfg.Width, Height: cfg.Height, Err: ErrTooLarge}
	}
	src, err := dec.decode(bytes.NewReader(data))
	if err != nil {
		return Result{}, &FormatError{Format: format, Err: ErrUndecodable}
	}
	if b := src.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		// A decoder that produced another size than its header declared
		// is not trusted further.
		return Result{}, &FormatError{Format: format, Err: ErrUndecodable}
	}
	orient := 1
	if format != "heic" { // HEIF applies its own rotation boxes while decoding; its EXIF orientation is informational
		orient = Orientation(format, data)
	}
	res := Result{Source: format, SourceWidth: cfg.Width, SourceHeight: cfg.Height}
	if orient != 1 {
		res.Orientation = orient
	}
	alpha := !opaque(src)
	lossless := format == "png" || format == "gif" || format == "bmp"

	// The upright size, then the size that fits the long side.
	w, h := cfg.Width, cfg.Height
	if orient >= 5 {
		w, h = h, w
	}
	w, h = fit(w, h, budget.LongSide)
	for {
		pic := upright(scale(src, orient, w, h), orient)
		var enc []byte
		q, isPNG := 0, false
		if alpha || lossless {
			if enc, err = encodePNG(pic); err != nil {
				return Result{}, err
			}
			isPNG = true
			if len(enc) > budget.Bytes && !alpha {
				enc, isPNG = nil, false // an opaque drawing too big as PNG goes on as JPEG
			}
		}
		if !isPNG {
			for _, q = range []int{85, 75, 65, 50, 35} {
				if enc, err = encodeJPEG(pic, q); err != nil {
					return Result{}, err
				}
				if len(enc) <= budget.Bytes {
					break
				}
			}
		}
		if len(enc) <= budget.Bytes {
			res.Data, res.Width, res.Height = enc, w, h
			if isPNG {
				res.MimeType = "image/png"
			} else {
				res.MimeType, res.Quality = "image/jpeg", q
			}
			return res, nil
		}
		if w <= 16 && h <= 16 {
			return Result{}, fmt.Errorf("imageview: %s picture does not fit %d bytes even at %d×%d", format, budget.Bytes, w, h)
		}
		// Three quarters of the pixel size each step: about half the bytes.
		w, h = max(1, w*3/4), max(1, h*3/4)
	}
}

// fit scales w×h down (never up) so that its longer side is at most long
// (0: no limit).
func fit(w, h, long int) (int, int) {
	if long <= 0 || (w <= long && h <= long) {
		return w, h
	}
	if w >= h {
		return long, max(1, int((int64(h)*int64(long)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(long)+int64(h)/2)/int64(h))), long
}

// scale draws src into a new RGBA picture whose upright size is w×h (for
// orientations 5–8 the stored picture is h×w).
func scale(src image.Image, orient, w, h int) *image.RGBA {
	if orient >= 5 {
		w, h = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if src.Bounds().Dx() == w && src.Bounds().Dy() == h {
		draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
		return dst
	}
	// BiLinear widens its kernel with the reduction, so a large step down
	// is averaged, not sampled (no aliasing), at a fraction of
	// CatmullRom's cost.
	draw.BiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// opaque reports whether every pixel of img is opaque (decoders' own
// images know it; anything else is assumed to have alpha only if its
// colour model has it).
func opaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

func encodeJPEG(img image.Image, q int) ([]byte, error) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		return nil, fmt.Errorf("imageview: encode jpeg: %w", err)
	}
	return b.Bytes(), nil
}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("imageview: encode png: %w", err)
	}
	return b.Bytes(), nil
}

// decoder is one format's header reader and decoder.
type decoder struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

// decoders are called directly by sniffed format (never through
// image.Decode's registry), so which code parses a file is decided here.
var decoders = map[string]decoder{
	"jpeg": {jpeg.DecodeConfig, jpeg.Decode},
	"png":  {png.DecodeConfig, png.Decode},
	"gif":  {gif.DecodeConfig, gif.Decode}, // the first frame only
	"tiff": {tiff.DecodeConfig, tiff.Decode},
	"webp": {webp.DecodeConfig, webp.Decode},
	"bmp":  {bmp.DecodeConfig, bmp.Decode},
}
