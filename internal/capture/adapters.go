// Package capture is the Capture service of seed 002 (docs/tools.md,
// "Capture"): capture_screenshot and capture_audio, each run by the first
// platform program found working when the service is built (internal/proc),
// each writing one new file inside the profile's file_dirs under
// save_attachment's rules (docs/security.md, "Device services").
//
// The files here hold the programs and the capture itself and do not
// import the MCP SDK; tools.go is the only one that does.
package capture

import (
	"strconv"
	"time"

	"github.com/tidings-mcp/tidings/internal/proc"
)

// ScreenshotCandidates are the screenshot programs of goos, in order of
// preference (docs/tools.md, "Capture"). Each writes a PNG file.
func ScreenshotCandidates(goos string) []proc.Candidate {
	if goos == "darwin" {
		return []proc.Candidate{{Name: "screencapture", Path: "/usr/sbin/screencapture",
			// -x: no camera sound; -t png: the file's format.
			Args: func(out string, _ int) []string { return []string{"-x", "-t", "png", out} }}}
	}
	return []proc.Candidate{
		{Name: "grim", Path: "grim", Probe: proc.NeedsEnv("WAYLAND_DISPLAY"),
			Args: func(out string, _ int) []string { return []string{"-t", "png", out} }},
		{Name: "import", Path: "import", Probe: proc.NeedsEnv("DISPLAY"), Args: importArgs},
		{Name: "gnome-screenshot", Path: "gnome-screenshot", Probe: proc.NeedsEnv("WAYLAND_DISPLAY", "DISPLAY"),
			Args: func(out string, _ int) []string { return []string{"-f", out} }},
	}
}

// importArgs is ImageMagick import's argv: the whole root window, PNG
// whatever the name says.
func importArgs(out string, _ int) []string { return []string{"-window", "root", "png:" + out} }

// RecorderCandidates are the audio recorders of goos, in order of
// preference. Each writes a WAV file of the given seconds.
func RecorderCandidates(goos string) []proc.Candidate {
	if goos == "darwin" {
		return []proc.Candidate{{Name: "afrecord", Path: "/usr/bin/afrecord", Interrupt: true,
			Args: func(out string, _ int) []string { return []string{"-f", "WAVE", "-d", "LEI16", out} }}}
	}
	return []proc.Candidate{
		{Name: "pw-record", Path: "pw-record", Probe: proc.PipeWire, Interrupt: true,
			Args: func(out string, _ int) []string { return []string{out} }},
		{Name: "arecord", Path: "arecord", Probe: proc.ALSACapture,
			Args: func(out string, s int) []string { return arecordArgs("default", out, s) }},
		{Name: "ffmpeg", Path: "ffmpeg", Probe: proc.ALSACapture,
			Args: func(out string, s int) []string {
				return []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-f", "alsa", "-i", "default",
					"-t", strconv.Itoa(s), "-y", out}
			}},
	}
}

// arecordArgs is arecord's argv on ALSA device dev: CD-quality WAV for s
// seconds.
func arecordArgs(dev, out string, s int) []string {
	return []string{"-q", "-D", dev, "-f", "cd", "-t", "wav", "-d", strconv.Itoa(s), out}
}

// ArecordOn is the arecord program on a named ALSA device (the tests'
// "null"); FindRecorder's uses "default".
func ArecordOn(path, dev string) proc.Program {
	return proc.Program{Name: "arecord", Path: path, Args: func(out string, s int) []string { return arecordArgs(dev, out, s) }}
}

// ImportOn is ImageMagick's import with env as the child's whole
// environment (the tests' DISPLAY of their own Xvfb).
func ImportOn(path string, env []string) proc.Program {
	return proc.Program{Name: "import", Path: path, Args: importArgs, Env: env}
}

// FindScreenshotter finds the screenshot program; the sentence says why
// there is none.
func FindScreenshotter(h proc.Host) (proc.Program, string) {
	install := ": install grim (Wayland), ImageMagick (X11) or gnome-screenshot"
	if h.GOOS == "darwin" {
		install = ""
	}
	return proc.Find(h, ScreenshotCandidates(h.GOOS), "screenshot", install)
}

// FindRecorder finds the audio recorder; the sentence says why there is
// none.
func FindRecorder(h proc.Host) (proc.Program, string) {
	install := ": install pipewire-bin, alsa-utils or ffmpeg"
	if h.GOOS == "darwin" {
		install = ""
	}
	return proc.Find(h, RecorderCandidates(h.GOOS), "audio recording", install)
}

// timestamp is a default file name's time, macOS style and without
// colons ("2026-12-02 at 09.41.07").
func timestamp(t time.Time) string { return t.Format("2006-01-02 at 15.04.05") }
