package capture

import (
	"context"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/filesafe"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// Limits of what a capture may leave behind (docs/tools.md, "Capture").
const (
	MaxScreenshotBytes = 100 << 20
	MaxAudioBytes      = 64 << 20
	// ScreenshotTimeout bounds the screenshot program.
	ScreenshotTimeout = 20 * time.Second
	// AudioSlack is how long a recorder may run past its seconds (start-up,
	// closing the file) before it is stopped.
	AudioSlack = 15 * time.Second
)

// Capturer takes screenshots and recordings with the programs found when
// the service was built. A zero Program (Path "") is a capture that cannot
// work here; the tool is then absent and never calls it.
type Capturer struct {
	Screenshotter proc.Program
	Recorder      proc.Program
	Runner        proc.Runner
	Now           func() time.Time
	// Home is the person's home folder: ~/Desktop is the tools' own default
	// folder (seed 002's default target, step 1). Empty: no such step.
	Home string
	// TempDir is where the private 0700 folder the program writes into is
	// made; empty means os.TempDir().
	TempDir string
}

// File is a capture that was saved.
type File struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Format  string `json:"format"`
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
	Seconds int    `json:"seconds,omitempty"`
	Program string `json:"program"`
}

// Screenshot captures the whole screen into a new PNG file at path (or
// the default target) inside dirs.
func (c *Capturer) Screenshot(ctx context.Context, path string, dirs []string) (File, error) {
	name := "Screenshot " + timestamp(c.Now()) + ".png"
	f, err := c.capture(ctx, c.Screenshotter, path, name, dirs, 0, ScreenshotTimeout, MaxScreenshotBytes, checkPNG)
	return f, err
}

// Audio records seconds of the default microphone into a new WAV file at
// path (or the default target) inside dirs.
func (c *Capturer) Audio(ctx context.Context, path string, seconds int, dirs []string) (File, error) {
	name := "Recording " + timestamp(c.Now()) + ".wav"
	f, err := c.capture(ctx, c.Recorder, path, name, dirs, seconds, time.Duration(seconds)*time.Second+AudioSlack, MaxAudioBytes, checkWAV)
	f.Seconds = seconds
	return f, err
}

// capture runs p into a private folder, checks what it wrote and places
// it at the target under save_attachment's rules. The program never sees
// the target: a link planted there, or a name it would resolve its own
// way (import's "png:" prefixes), cannot redirect its write.
func (c *Capturer) capture(ctx context.Context, p proc.Program, path, name string, dirs []string, seconds int,
	timeout time.Duration, limit int64, check func(io.ReadSeeker) (File, error)) (File, error) {
	if p.Path == "" {
		return File{}, errors.New("no program for this capture works here")
	}
	target, err := DefaultTarget(path, c.Home, dirs, name)
	if err != nil {
		return File{}, err
	}
	dir, dest, err := filesafe.CheckTarget("path", target, dirs)
	if err != nil {
		return File{}, err
	}
	if _, err := os.Lstat(dest); err == nil {
		return File{}, fmt.Errorf("%s already exists; choose another file name (captures never replace a file)", output.Name(dest))
	}
	tmp, err := os.MkdirTemp(c.TempDir, "tidings-capture-")
	if err != nil {
		return File{}, fmt.Errorf("capture: private folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "capture"+filepath.Ext(name))
	res, err := c.Runner.Run(ctx, p.Command(out, seconds, timeout))
	if err != nil {
		return File{}, fmt.Errorf("capture with %s: %w", p.Name, err)
	}
	if res.TimedOut {
		return File{}, fmt.Errorf("%s did not finish within %s, so it was stopped and nothing was saved", p.Name, timeout)
	}
	if res.ExitCode != 0 && !res.Interrupted {
		return File{}, fmt.Errorf("%s failed (exit status %d%s); nothing was saved", p.Name, res.ExitCode, firstLine(res.Stderr))
	}
	if fi, err := os.Lstat(out); err == nil && !fi.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s wrote something that is not a file; nothing was saved", p.Name)
	}
	fh, err := os.Open(out)
	if err != nil {
		return File{}, fmt.Errorf("%s wrote no file%s; nothing was saved", p.Name, firstLine(res.Stderr))
	}
	defer fh.Close()
	fi, err := fh.Stat()
	switch {
	case err != nil || !fi.Mode().IsRegular():
		return File{}, fmt.Errorf("%s wrote something that is not a file; nothing was saved", p.Name)
	case fi.Size() > limit:
		return File{}, fmt.Errorf("%s wrote %d bytes, more than the %d a capture may keep; nothing was saved", p.Name, fi.Size(), limit)
	}
	f, err := check(fh)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w; nothing was saved", p.Name, err)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return File{}, fmt.Errorf("capture: %w", err)
	}
	if _, err := filesafe.PlaceFile(dir, dest, fh, false); err != nil {
		return File{}, err
	}
	f.Path, f.Bytes, f.Program = dest, fi.Size(), p.Name
	return f, nil
}

// DefaultTarget is the file a capture writes: path when given, else name
// in the folder seed 002's default-target rule picks — the tools' own
// default (~/Desktop) when file_dirs contains it, else the single folder
// of file_dirs, else none: the caller must name a file.
func DefaultTarget(path, home string, dirs []string, name string) (string, error) {
	if strings.TrimSpace(path) != "" {
		return path, nil
	}
	if home != "" {
		p := filepath.Join(home, "Desktop", name)
		if _, _, err := filesafe.CheckTarget("path", p, dirs); err == nil {
			return p, nil
		}
	}
	if len(dirs) == 1 {
		return filepath.Join(dirs[0], name), nil
	}
	return "", fmt.Errorf("path is required: this profile may write in %s, so name a file inside one of them", strings.Join(dirs, " or "))
}

func checkPNG(r io.ReadSeeker) (File, error) {
	cfg, err := png.DecodeConfig(r)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return File{}, errors.New("it did not write a PNG image")
	}
	return File{Format: "png", Width: cfg.Width, Height: cfg.Height}, nil
}

func checkWAV(r io.ReadSeeker) (File, error) {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[0:4]) != "RIFF" || string(h[8:12]) != "WAVE" {
		return File{}, errors.New("it did not write a WAV file")
	}
	return File{Format: "wav"}, nil
}

// firstLine is ": " and the first line of a program's stderr, one line of
// at most 200 characters, escaped; "" when there is none.
func firstLine(stderr string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if line == "" {
		return ""
	}
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return ": " + output.Name(line)
}
