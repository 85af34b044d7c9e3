package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Program is one platform program and how to call it: its absolute path
// and the argv for an output or input file, never a shell string.
type Program struct {
	// Name is the program's name as documented ("import", "pw-record").
	Name string
	// Path is the absolute path exec.LookPath found.
	Path string
	// Args builds the argv after the program name for the file and, for
	// recorders and players, the length in seconds.
	Args func(file string, seconds int) []string
	// Interrupt marks a program without a duration flag: it is stopped
	// with SIGINT after the seconds, its ordinary end (Command.Interrupt).
	Interrupt bool
	// Env, when not nil, is the child's whole environment (tests give
	// DISPLAY for their own Xvfb); nil inherits the server's.
	Env []string
}

// Command is the Command running p on file for seconds, bounded by
// timeout.
func (p Program) Command(file string, seconds int, timeout time.Duration) Command {
	c := Command{Path: p.Path, Args: p.Args(file, seconds), Env: p.Env, Timeout: timeout}
	if p.Interrupt {
		c.Interrupt = time.Duration(seconds) * time.Second
	}
	return c
}

// Candidate is one program an OS may have, with its cheap probe.
type Candidate struct {
	Name string
	// Path is absolute for a system program (macOS's own), else a name
	// looked up on PATH.
	Path      string
	Args      func(file string, seconds int) []string
	Interrupt bool
	// Probe says in a few words why the program cannot work here ("finds
	// no PipeWire socket"), or "" when it can. Nil: found is enough.
	Probe func(h Host) string
}

// Host is what finding a program reads of the machine: the seams tests
// replace.
type Host struct {
	GOOS     string
	LookPath func(string) (string, error)
	Getenv   func(string) string
	// Exists reports whether a path exists (a socket, a device).
	Exists func(string) bool
	// Glob lists the paths matching a pattern.
	Glob func(string) []string
}

// SystemHost is the machine this process runs on.
func SystemHost(goos string) Host {
	return Host{GOOS: goos, LookPath: exec.LookPath, Getenv: os.Getenv,
		Exists: func(p string) bool { _, err := os.Stat(p); return err == nil },
		Glob:   func(p string) []string { m, _ := filepath.Glob(p); return m }}
}

// Find returns the first candidate on PATH whose probe passes. Without
// one, the string is the one sentence get_status and permissions_check
// give as the tool's reason: what (a "screenshot" program) works here,
// what was tried and why each failed, then install (": install …").
func Find(h Host, cands []Candidate, what, install string) (Program, string) {
	if len(cands) == 0 {
		return Program{}, "no " + what + " program exists on " + h.GOOS + install
	}
	var why []string
	for _, c := range cands {
		p, err := h.LookPath(c.Path)
		if err != nil {
			why = append(why, c.Name+" is not installed")
			continue
		}
		if c.Probe != nil {
			if reason := c.Probe(h); reason != "" {
				why = append(why, c.Name+" "+reason)
				continue
			}
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return Program{Name: c.Name, Path: p, Args: c.Args, Interrupt: c.Interrupt}, ""
	}
	return Program{}, "no " + what + " program works here (" + strings.Join(why, "; ") + ")" + install
}

// NeedsEnv is a probe: the program works only inside a session that sets
// one of vars.
func NeedsEnv(vars ...string) func(Host) string {
	return func(h Host) string {
		for _, v := range vars {
			if h.Getenv(v) != "" {
				return ""
			}
		}
		return "needs " + strings.Join(vars, " or ") + " set (run Tidings in the desktop session)"
	}
}

// PipeWire is the probe of pw-record and pw-play: the session's socket.
func PipeWire(h Host) string {
	dir := h.Getenv("XDG_RUNTIME_DIR")
	if dir == "" || !h.Exists(filepath.Join(dir, "pipewire-0")) {
		return "finds no PipeWire socket ($XDG_RUNTIME_DIR/pipewire-0)"
	}
	return ""
}

// Pulse is paplay's probe: the PulseAudio (or pipewire-pulse) socket.
func Pulse(h Host) string {
	if h.Getenv("PULSE_SERVER") != "" {
		return ""
	}
	dir := h.Getenv("XDG_RUNTIME_DIR")
	if dir == "" || !h.Exists(filepath.Join(dir, "pulse", "native")) {
		return "finds no PulseAudio socket ($XDG_RUNTIME_DIR/pulse/native)"
	}
	return ""
}

// ALSACapture and ALSAPlayback are the probes of the ALSA programs: a
// sound card device of that direction under /dev/snd.
func ALSACapture(h Host) string {
	if len(h.Glob("/dev/snd/pcmC*D*c")) == 0 {
		return "finds no ALSA capture device (/dev/snd)"
	}
	return ""
}

// ALSAPlayback: see ALSACapture.
func ALSAPlayback(h Host) string {
	if len(h.Glob("/dev/snd/pcmC*D*p")) == 0 {
		return "finds no ALSA playback device (/dev/snd)"
	}
	return ""
}
