// Package utilities is the Utilities service of seed 002 (docs/tools.md,
// "Utilities"): utilities_play_sound plays a sound file from inside the
// profile's file_dirs through the platform's player (internal/proc).
// This file does not import the MCP SDK; tools.go does.
package utilities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/filesafe"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// MaxSoundBytes is the largest sound file played; PlaySlack is how long a
// player may run past its seconds before it is stopped.
const (
	MaxSoundBytes = 50 << 20
	PlaySlack     = 10 * time.Second
)

// PlayerCandidates are the players of goos, in order of preference. The
// length is bounded by SIGINT after the seconds (Interrupt), the same for
// every player.
func PlayerCandidates(goos string) []proc.Candidate {
	file := func(f string, _ int) []string { return []string{f} }
	if goos == "darwin" {
		return []proc.Candidate{{Name: "afplay", Path: "/usr/bin/afplay", Args: file, Interrupt: true}}
	}
	return []proc.Candidate{
		{Name: "pw-play", Path: "pw-play", Probe: proc.PipeWire, Args: file, Interrupt: true},
		{Name: "paplay", Path: "paplay", Probe: proc.Pulse, Args: file, Interrupt: true},
		{Name: "aplay", Path: "aplay", Probe: proc.ALSAPlayback, Args: func(f string, _ int) []string { return aplayArgs("default", f) }, Interrupt: true},
	}
}

func aplayArgs(dev, f string) []string { return []string{"-q", "-D", dev, f} }

// AplayOn is aplay on a named ALSA device (the tests' "null").
func AplayOn(path, dev string) proc.Program {
	return proc.Program{Name: "aplay", Path: path, Args: func(f string, _ int) []string { return aplayArgs(dev, f) }, Interrupt: true}
}

// FindPlayer finds the sound player; the sentence says why there is none.
func FindPlayer(h proc.Host) (proc.Program, string) {
	install := ": install pipewire-bin, pulseaudio-utils or alsa-utils"
	if h.GOOS == "darwin" {
		install = ""
	}
	return proc.Find(h, PlayerCandidates(h.GOOS), "sound playing", install)
}

// Player plays sound files with the program found at start.
type Player struct {
	Program proc.Program
	Runner  proc.Runner
	// TempDir is where the private copy is made; empty means os.TempDir().
	TempDir string
}

// Played is utilities_play_sound's answer.
type Played struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Format  string `json:"format"`
	Program string `json:"program"`
	// Stopped is true when the sound was longer than the seconds and was
	// cut there.
	Stopped bool `json:"stopped"`
}

// Play plays the sound file at path, which must be inside dirs, for at
// most seconds. The player never opens the caller's path: the checked,
// open file is copied into a private folder and the copy is played, so a
// link swapped in after the check changes nothing.
func (p *Player) Play(ctx context.Context, path string, seconds int, dirs []string) (Played, error) {
	if p.Program.Path == "" {
		return Played{}, errors.New("no sound player works here")
	}
	f, err := filesafe.OpenInside("path", path, dirs, MaxSoundBytes)
	if err != nil {
		return Played{}, err
	}
	defer f.Close()
	var head [16]byte
	n, _ := io.ReadFull(f, head[:])
	format := soundFormat(head[:n])
	if format == "" {
		return Played{}, fmt.Errorf("%s is not a sound file (WAV, AIFF, FLAC, Ogg, MP3, CAF or M4A)", output.Name(path))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Played{}, fmt.Errorf("play: %w", err)
	}
	tmp, err := os.MkdirTemp(p.TempDir, "tidings-sound-")
	if err != nil {
		return Played{}, fmt.Errorf("play: private folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, "sound."+format)
	out, err := os.OpenFile(cp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Played{}, fmt.Errorf("play: %w", err)
	}
	n64, err := io.Copy(out, io.LimitReader(f, MaxSoundBytes))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Played{}, fmt.Errorf("play: copy: %w", err)
	}
	timeout := time.Duration(seconds)*time.Second + PlaySlack
	res, err := p.Runner.Run(ctx, p.Program.Command(cp, seconds, timeout))
	if err != nil {
		return Played{}, fmt.Errorf("play with %s: %w", p.Program.Name, err)
	}
	switch {
	case res.TimedOut:
		return Played{}, fmt.Errorf("%s did not stop within %s, so it was stopped", p.Program.Name, timeout)
	case res.ExitCode != 0 && !res.Interrupted:
		return Played{}, fmt.Errorf("%s could not play the file (exit status %d%s)", p.Program.Name, res.ExitCode, firstLine(res.Stderr))
	}
	return Played{Path: output.Name(path), Bytes: n64, Format: format, Program: p.Program.Name, Stopped: res.Interrupted}, nil
}

// soundFormat names a sound file's format by its signature; "" when it is
// none of the formats the players read.
func soundFormat(h []byte) string {
	at := func(i int, s string) bool { return len(h) >= i+len(s) && string(h[i:i+len(s)]) == s }
	switch {
	case at(0, "RIFF") && at(8, "WAVE"):
		return "wav"
	case at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC")):
		return "aiff"
	case at(0, "fLaC"):
		return "flac"
	case at(0, "OggS"):
		return "ogg"
	case at(0, "caff"):
		return "caf"
	case at(4, "ftyp") && (at(8, "M4A ") || at(8, "M4B ") || at(8, "mp42") || at(8, "isom")):
		return "m4a"
	case at(0, "ID3"), len(h) >= 2 && h[0] == 0xFF && h[1]&0xE0 == 0xE0:
		return "mp3"
	}
	return ""
}

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
