package demo

import (
	"bytes"
	_ "embed"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
)

// renderPhoto draws a small, deterministic "photo": a sky gradient, a sun
// and rolling hills whose colours and shapes depend on n. Real JPEG bytes,
// so a saved attachment opens in any viewer.
func renderPhoto(n int) []byte {
	const w, h = 160, 120
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	hue := float64(n%12) / 12
	top := hsv(hue, 0.45, 0.95)
	bottom := hsv(math.Mod(hue+0.08, 1), 0.25, 1)
	hill := hsv(math.Mod(hue+0.35, 1), 0.55, 0.55)
	sunX, sunY, sunR := 30+(n*37)%100, 25+(n*13)%30, 10+n%8
	for y := 0; y < h; y++ {
		t := float64(y) / h
		sky := mix(top, bottom, t)
		ridge := float64(h)*0.62 + 10*math.Sin(float64(n)+float64(0)*0.07)
		for x := 0; x < w; x++ {
			c := sky
			dx, dy := x-sunX, y-sunY
			if dx*dx+dy*dy < sunR*sunR {
				c = color.RGBA{255, 236, 170, 255}
			}
			if float64(y) > ridge+12*math.Sin(float64(x)/17+float64(n)) {
				c = mix(hill, color.RGBA{20, 40, 20, 255}, (float64(y)-ridge)/float64(h))
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return buf.Bytes()
}

// renderSticker draws a small round face as a PNG with transparency.
func renderSticker(n int) []byte {
	const s = 96
	img := image.NewNRGBA(image.Rect(0, 0, s, s))
	face := hsv(float64(n%6)/6, 0.6, 1)
	for y := 0; y < s; y++ {
		for x := 0; x < s; x++ {
			dx, dy := x-s/2, y-s/2
			d := dx*dx + dy*dy
			switch {
			case d < 40*40:
				c := face
				ex1, ex2, ey := (x-34)*(x-34), (x-62)*(x-62), (y-38)*(y-38)
				if ex1+ey < 25 || ex2+ey < 25 {
					c = color.RGBA{30, 30, 30, 255}
				}
				if y > 56 && y < 62 && dx*dx < 16*16 && (y-56)*(y-56)+dx*dx/8 < 60 {
					c = color.RGBA{120, 30, 40, 255}
				}
				img.Set(x, y, c)
			case d < 42*42:
				img.Set(x, y, color.RGBA{40, 40, 40, 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func mix(a, b color.RGBA, t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	f := func(x, y uint8) uint8 { return uint8(float64(x)*(1-t) + float64(y)*t) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 255}
}

func hsv(h, s, v float64) color.RGBA {
	i := math.Floor(h * 6)
	f := h*6 - i
	p, q, t := v*(1-s), v*(1-f*s), v*(1-(1-f)*s)
	var r, g, b float64
	switch int(i) % 6 {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return color.RGBA{uint8(r * 255), uint8(g * 255), uint8(b * 255), 255}
}

// heicPhoto is a real HEIC file (480×360, HEVC in HEIF, no metadata), made
// once and committed: see assets/README.md. Encoding HEIC needs an HEVC
// encoder, which the generator does not carry.
//
//go:embed assets/IMG_5120.heic
var heicPhoto []byte

// storyPhoto is a storyline photo with its own bytes and type.
type storyPhoto struct {
	uti, mime string
	data      func() []byte
}

// storyPhotos are the storyline photos that are not drawn by renderPhoto.
var storyPhotos = map[string]storyPhoto{
	"IMG_5120.HEIC": {uti: "public.heic", mime: "image/heic", data: func() []byte { return heicPhoto }},
	"IMG_5133.JPG":  {uti: "public.jpeg", mime: "image/jpeg", data: portraitPhoto},
}

// PortraitMarker is the side of the red square portraitPhoto draws in the
// stored picture's top-left corner; shown upright (orientation 6: turned
// 90° clockwise) it is in the top-right corner.
const PortraitMarker = 40

// portraitPhoto is a phone camera's portrait photo: 240×180 sensor pixels
// stored sideways, EXIF orientation 6 and a GPS position (Mount Tamalpais).
func portraitPhoto() []byte {
	const w, h = 240, 180
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := mix(color.RGBA{70, 130, 200, 255}, color.RGBA{200, 220, 240, 255}, float64(x)/w)
			if x < PortraitMarker && y < PortraitMarker {
				c = color.RGBA{230, 20, 20, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return JPEGWithExif(buf.Bytes(), 6, 37.9235, -122.5965)
}
