package send

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF for image.Decode
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Image limits. Messages refuses attachments above roughly 100 MB; the pixel
// cap bounds the memory a full decode takes.
const (
	MaxImageBytes  = 100 << 20
	MaxImagePixels = 80_000_000
)

// Image describes a validated image_path. Path is the resolved file (never
// shown to a model: Name is).
type Image struct {
	Name   string `json:"name"`
	Format string `json:"format"` // png, jpeg, gif, heic
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Decoded is true when the whole image was decoded; false for HEIC,
	// which is recognised by its signature only.
	Decoded bool   `json:"decoded"`
	Note    string `json:"note,omitempty"`
	Path    string `json:"-"`
}

// heicBrands are the ISO BMFF major brands of HEIF/HEIC stills.
var heicBrands = map[string]bool{"heic": true, "heix": true, "heim": true, "heis": true, "hevc": true, "hevx": true, "mif1": true, "msf1": true}

// checkImage validates image_path: an absolute path that, after resolving
// every symlink, is a regular file inside one of dirs (themselves resolved),
// at most MaxImageBytes, and decodes as PNG, JPEG or GIF with the standard
// library — or carries a HEIC signature, which pure Go cannot decode, and is
// accepted on that signature alone (Image.Note says so).
func checkImage(p string, dirs []string) (*Image, error) {
	bad := func(msg string) error { return newErr(CodeInvalidImage, "image_path: "+msg) }
	if len(dirs) == 0 {
		return nil, bad("no folders are allowed for images; a profile's file_dirs must name the folders images may be sent from")
	}
	if !filepath.IsAbs(p) {
		return nil, bad("must be an absolute path")
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, bad("the file cannot be found")
	}
	inside := false
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(rd, resolved); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			inside = true
			break
		}
	}
	if !inside {
		return nil, bad("the file is outside the folders this profile allows (file_dirs)")
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, bad("the file cannot be opened")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, bad("not a regular file")
	}
	if fi.Size() > MaxImageBytes {
		return nil, bad(fmt.Sprintf("the file has %d bytes; the limit is %d", fi.Size(), MaxImageBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return nil, bad("the file cannot be read")
	}
	sum := sha256.Sum256(data)
	img := &Image{Name: filepath.Base(resolved), Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Path: resolved}
	if isHEIC(data) {
		img.Format = "heic"
		img.Note = "HEIC recognised by its file signature only: Go cannot decode HEIC, so the picture itself was not checked"
		return img, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, bad("the file is not a PNG, JPEG, GIF or HEIC image")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return nil, bad(fmt.Sprintf("the image is %d×%d pixels; the limit is %d pixels", cfg.Width, cfg.Height, MaxImagePixels))
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return nil, bad(fmt.Sprintf("the %s image does not decode: %v", format, err))
	}
	img.Format, img.Width, img.Height, img.Decoded = format, cfg.Width, cfg.Height, true
	return img, nil
}

// isHEIC reports whether data starts with an ISO BMFF "ftyp" box whose
// major brand is a HEIF still-image brand.
func isHEIC(data []byte) bool {
	return len(data) >= 12 && string(data[4:8]) == "ftyp" && heicBrands[string(data[8:12])]
}

// stagedName is the file name an image gets in the staging folder:
// "<random>-<name>", the name reduced to [A-Za-z0-9._-] and ending in the
// extension of its real format, so Messages reads it as what it is.
func stagedName(img *Image) string {
	var rnd [8]byte
	rand.Read(rnd[:])
	base := strings.TrimSuffix(img.Name, filepath.Ext(img.Name))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), ".")
	if name == "" {
		name = "image"
	}
	name = clip(name, 80)
	ext := map[string]string{"png": ".png", "jpeg": ".jpg", "gif": ".gif", "heic": ".heic"}[img.Format]
	return hex.EncodeToString(rnd[:]) + "-" + name + ext
}

// stageImage copies the validated image into dir (created 0700) and
// returns the copy's path. The copy is checked against the SHA-256 taken
// when the image was validated, so what Messages is handed is exactly what
// the person approved even if the original changed since. Messages is
// sandboxed and cannot read files outside ~/Library/Messages
// (docs/security.md, "Sending and verification"),
// hence the staging folder there.
func stageImage(img *Image, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create staging folder: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	src, err := os.OpenFile(img.Path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return "", fmt.Errorf("open image: %w", err)
	}
	defer src.Close()
	dst := filepath.Join(dir, stagedName(img))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return "", fmt.Errorf("stage image: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), io.LimitReader(src, MaxImageBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && hex.EncodeToString(h.Sum(nil)) != img.SHA256 {
		err = errors.New("the image changed after it was approved")
	}
	if err != nil {
		os.Remove(dst)
		return "", fmt.Errorf("stage image: %w", err)
	}
	return dst, nil
}

// reapStaging removes staged images older than an hour: leftovers of a
// process that died between staging and cleanup.
func reapStaging(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || len(e.Name()) < 17 || e.Name()[16] != '-' {
			continue
		}
		if time.Since(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
