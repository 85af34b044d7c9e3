package send

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 40), uint8(y * 40), 200, 255})
		}
	}
	return img
}

func writePNG(t testing.TB, path string, w, h int) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func encoded(t *testing.T, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, testImage(6, 3))
	case "jpeg":
		err = jpeg.Encode(&b, testImage(6, 3), nil)
	case "gif":
		err = gif.Encode(&b, testImage(6, 3), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// heic is the start of a real HEIC file: an ftyp box with brand heic.
var heic = append([]byte{0, 0, 0, 0x18, 'f', 't', 'y', 'p', 'h', 'e', 'i', 'c', 0, 0, 0, 0, 'm', 'i', 'f', '1', 'h', 'e', 'i', 'c'}, bytes.Repeat([]byte{7}, 100)...)

func TestCheckImage(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	write := func(dir, name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pngData := encoded(t, "png")
	sub := filepath.Join(allowed, "sub")
	os.Mkdir(sub, 0o700)
	linkDir := filepath.Join(t.TempDir(), "link-to-allowed")
	os.Symlink(allowed, linkDir)

	tests := []struct {
		name    string
		path    string
		dirs    []string
		format  string
		decoded bool
		msg     string // error substring; "" = accepted
	}{
		{"png", write(allowed, "a.png", pngData), []string{allowed}, "png", true, ""},
		{"jpeg", write(allowed, "b.jpg", encoded(t, "jpeg")), []string{allowed}, "jpeg", true, ""},
		{"gif", write(allowed, "c.gif", encoded(t, "gif")), []string{allowed}, "gif", true, ""},
		{"heic by signature", write(allowed, "d.HEIC", heic), []string{allowed}, "heic", false, ""},
		{"png named .txt", write(allowed, "e.txt", pngData), []string{allowed}, "png", true, ""},
		{"in a subfolder", write(sub, "f.png", pngData), []string{allowed}, "png", true, ""},
		{"allowed dir given through a symlink", write(allowed, "g.png", pngData), []string{linkDir}, "png", true, ""},
		{"text renamed .png", write(allowed, "h.png", []byte("this is not an image")), []string{allowed}, "", false, "not a PNG, JPEG, GIF or HEIC"},
		{"truncated png", write(allowed, "i.png", pngData[:len(pngData)/2]), []string{allowed}, "", false, "does not decode"},
		{"empty file", write(allowed, "j.png", nil), []string{allowed}, "", false, "not a PNG"},
		{"outside the folders", write(outside, "k.png", pngData), []string{allowed}, "", false, "outside the folders"},
		{"no folders", write(allowed, "l.png", pngData), nil, "", false, "file_dirs"},
		{"relative path", "a.png", []string{allowed}, "", false, "absolute"},
		{"missing file", filepath.Join(allowed, "nope.png"), []string{allowed}, "", false, "cannot be found"},
		{"the folder itself", allowed, []string{allowed}, "", false, "outside the folders"},
		{"dot-dot escape", filepath.Join(allowed, "..", filepath.Base(outside), "k.png"), []string{allowed}, "", false, "outside the folders"},
	}
	// A symlink inside the allowed folder pointing outside is resolved
	// before the check.
	escape := filepath.Join(allowed, "escape.png")
	os.Symlink(filepath.Join(outside, "k.png"), escape)
	tests = append(tests, struct {
		name    string
		path    string
		dirs    []string
		format  string
		decoded bool
		msg     string
	}{"symlink pointing outside", escape, []string{allowed}, "", false, "outside the folders"})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := checkImage(tt.path, tt.dirs)
			if tt.msg != "" {
				wantCode(t, err, CodeInvalidImage)
				if !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("err %q lacks %q", err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(img.Path)
			sum := sha256.Sum256(data)
			if img.Format != tt.format || img.Decoded != tt.decoded || img.SHA256 != hex.EncodeToString(sum[:]) || img.Bytes != int64(len(data)) {
				t.Fatalf("image = %+v", img)
			}
			if !tt.decoded && !strings.Contains(img.Note, "HEIC") {
				t.Errorf("undecoded image without a note: %+v", img)
			}
		})
	}
}

func TestStageImage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "Holiday photo (1).png")
	writePNG(t, src, 3, 3)
	img, err := checkImage(src, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(t.TempDir(), "Library", "Messages", ".send-staging")
	p, err := stageImage(img, staging)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(p)
	if filepath.Dir(p) != staging || len(base) < 17 || base[16] != '-' || !strings.HasSuffix(base, "-Holiday_photo__1_.png") {
		t.Fatalf("staged as %s", p)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(p)
	if !bytes.Equal(a, b) {
		t.Fatal("staged copy differs")
	}
	if fi, _ := os.Stat(staging); fi.Mode().Perm() != 0o700 {
		t.Errorf("staging folder mode %v", fi.Mode())
	}
	// A file that changed after validation is not staged.
	writePNG(t, src, 4, 4)
	if _, err := stageImage(img, staging); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("changed image staged: %v", err)
	}
	entries, _ := os.ReadDir(staging)
	if len(entries) != 1 {
		t.Fatalf("staging holds %d files, want the first copy only", len(entries))
	}
}

func TestStagedNameUsesRealFormat(t *testing.T) {
	for _, tt := range []struct{ name, format, suffix string }{
		{"a.txt", "png", "-a.png"},
		{"IMG_0001.HEIC", "heic", "-IMG_0001.heic"},
		{"../../etc/passwd", "jpeg", "-passwd.jpg"},
		{"...", "gif", "-image.gif"},
		{"фото.jpeg", "jpeg", "-____.jpg"},
	} {
		got := stagedName(&Image{Name: filepath.Base(tt.name), Format: tt.format})
		if !strings.HasSuffix(got, tt.suffix) || strings.ContainsAny(got, "/\\") {
			t.Errorf("stagedName(%q) = %q, want suffix %q", tt.name, got, tt.suffix)
		}
	}
}
