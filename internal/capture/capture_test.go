package capture

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/proc"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// fakeHost is a machine with the named programs on PATH, the given
// environment and files.
func fakeHost(goos string, installed []string, env map[string]string, files ...string) proc.Host {
	return proc.Host{GOOS: goos,
		LookPath: func(name string) (string, error) {
			if slices.Contains(installed, filepath.Base(name)) {
				if filepath.IsAbs(name) {
					return name, nil
				}
				return "/fake/bin/" + name, nil
			}
			return "", errors.New("not found")
		},
		Getenv: func(k string) string { return env[k] },
		Exists: func(p string) bool { return slices.Contains(files, p) },
		Glob: func(p string) []string {
			var out []string
			for _, f := range files {
				if ok, _ := filepath.Match(p, f); ok {
					out = append(out, f)
				}
			}
			return out
		},
	}
}

// TestEachPlatformFindsItsProgramOrSaysWhy pins the command construction
// of every adapter on every OS, whatever OS runs the test: which program
// is chosen, its exact argv, and the one sentence when none works.
func TestEachPlatformFindsItsProgramOrSaysWhy(t *testing.T) {
	const out = "/private/tmp/x/capture.png"
	for _, tt := range []struct {
		name      string
		host      proc.Host
		find      func(proc.Host) (proc.Program, string)
		wantPath  string
		wantArgs  []string
		interrupt bool
		why       string
	}{
		{"macOS screencapture", fakeHost("darwin", []string{"screencapture"}, nil), FindScreenshotter,
			"/usr/sbin/screencapture", []string{"-x", "-t", "png", out}, false, ""},
		{"Wayland grim", fakeHost("linux", []string{"grim", "import"}, map[string]string{"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}), FindScreenshotter,
			"/fake/bin/grim", []string{"-t", "png", out}, false, ""},
		{"X11 import", fakeHost("linux", []string{"grim", "import"}, map[string]string{"DISPLAY": ":0"}), FindScreenshotter,
			"/fake/bin/import", []string{"-window", "root", "png:" + out}, false, ""},
		{"gnome-screenshot", fakeHost("linux", []string{"gnome-screenshot"}, map[string]string{"WAYLAND_DISPLAY": "w"}), FindScreenshotter,
			"/fake/bin/gnome-screenshot", []string{"-f", out}, false, ""},
		{"import without DISPLAY", fakeHost("linux", []string{"import"}, nil), FindScreenshotter, "", nil, false,
			"no screenshot program works here (grim is not installed; import needs DISPLAY set (run Tidings in the desktop session); gnome-screenshot is not installed): install grim (Wayland), ImageMagick (X11) or gnome-screenshot"},
		{"macOS without screencapture", fakeHost("darwin", nil, nil), FindScreenshotter, "", nil, false,
			"no screenshot program works here (screencapture is not installed)"},
		{"macOS afrecord", fakeHost("darwin", []string{"afrecord"}, nil), FindRecorder,
			"/usr/bin/afrecord", []string{"-f", "WAVE", "-d", "LEI16", out}, true, ""},
		{"PipeWire", fakeHost("linux", []string{"pw-record", "arecord"}, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}, "/run/user/1/pipewire-0"), FindRecorder,
			"/fake/bin/pw-record", []string{out}, true, ""},
		{"ALSA", fakeHost("linux", []string{"pw-record", "arecord"}, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}, "/dev/snd/pcmC0D0c"), FindRecorder,
			"/fake/bin/arecord", []string{"-q", "-D", "default", "-f", "cd", "-t", "wav", "-d", "7", out}, false, ""},
		{"ffmpeg", fakeHost("linux", []string{"ffmpeg"}, nil, "/dev/snd/pcmC0D0c"), FindRecorder,
			"/fake/bin/ffmpeg", []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-f", "alsa", "-i", "default", "-t", "7", "-y", out}, false, ""},
		{"no capture device", fakeHost("linux", []string{"arecord"}, nil, "/dev/snd/pcmC0D0p"), FindRecorder, "", nil, false,
			"no audio recording program works here (pw-record is not installed; arecord finds no ALSA capture device (/dev/snd); ffmpeg is not installed): install pipewire-bin, alsa-utils or ffmpeg"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, why := tt.find(tt.host)
			if why != tt.why {
				t.Fatalf("why = %q\nwant  %q", why, tt.why)
			}
			if tt.why != "" {
				return
			}
			c := p.Command(out, 7, time.Minute)
			if c.Path != tt.wantPath || !slices.Equal(c.Args, tt.wantArgs) || (c.Interrupt > 0) != tt.interrupt {
				t.Fatalf("command %s %q interrupt %v\nwant    %s %q interrupt %v", c.Path, c.Args, c.Interrupt, tt.wantPath, tt.wantArgs, tt.interrupt)
			}
			if tt.interrupt && c.Interrupt != 7*time.Second {
				t.Fatalf("interrupt after %v, want the seconds", c.Interrupt)
			}
		})
	}
}

// fakeRunner records commands and plays the program: it writes what write
// returns to the output file named in the argv (the last argument, less
// import's "png:").
type fakeRunner struct {
	cmds  []proc.Command
	write func(out string) error
	res   proc.Result
}

func (f *fakeRunner) Run(_ context.Context, c proc.Command) (proc.Result, error) {
	f.cmds = append(f.cmds, c)
	out := strings.TrimPrefix(c.Args[len(c.Args)-1], "png:")
	if f.write != nil {
		if err := f.write(out); err != nil {
			return proc.Result{}, err
		}
	}
	return f.res, nil
}

func pngBytes(w, h int) []byte {
	var b bytes.Buffer
	png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)))
	return b.Bytes()
}

func writes(data []byte) func(string) error {
	return func(out string) error { return os.WriteFile(out, data, 0o600) }
}

var wav = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 32)...)

func newCapturer(r proc.Runner, home string) *Capturer {
	return &Capturer{
		Screenshotter: proc.Program{Name: "import", Path: "/fake/bin/import", Args: importArgs},
		Recorder:      proc.Program{Name: "pw-record", Path: "/fake/bin/pw-record", Args: func(o string, _ int) []string { return []string{o} }, Interrupt: true},
		Runner:        r, Home: home, Now: func() time.Time { return testclock.Date(2026, 3, 14, 9, 41, 7, 0, time.UTC) },
	}
}

// TestTheProgramWritesOnlyAPrivateFile: the program is given a file in a
// private temporary folder, never the target; what it wrote is checked
// (PNG, WAV) and then placed at the target with mode 0600; a failure, a
// timeout or output of the wrong kind saves nothing.
func TestTheProgramWritesOnlyAPrivateFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(string) error
		res   proc.Result
		audio bool
		want  string
	}{
		{"screenshot", writes(pngBytes(3, 2)), proc.Result{}, false, ""},
		{"recording stopped by SIGINT", writes(wav), proc.Result{ExitCode: 130, Interrupted: true}, true, ""},
		{"exit status", writes(pngBytes(3, 2)), proc.Result{ExitCode: 1, Stderr: "import: unable to open X server `:0'\nmore"}, false,
			"import failed (exit status 1: import: unable to open X server `:0'); nothing was saved"},
		{"timeout", writes(pngBytes(3, 2)), proc.Result{TimedOut: true}, false, "did not finish within 20s"},
		{"not a PNG", writes([]byte("GIF89a")), proc.Result{}, false, "import: it did not write a PNG image; nothing was saved"},
		{"not a WAV", writes([]byte("OggS")), proc.Result{Interrupted: true}, true, "it did not write a WAV file"},
		{"no file", nil, proc.Result{}, false, "import wrote no file"},
		{"a link instead of a file", func(out string) error { return os.Symlink("/etc/passwd", out) }, proc.Result{}, false, "not a file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := &fakeRunner{write: tt.write, res: tt.res}
			c := newCapturer(r, "")
			target := filepath.Join(dir, "shot.png")
			var f File
			var err error
			if tt.audio {
				target = filepath.Join(dir, "rec.wav")
				f, err = c.Audio(context.Background(), target, 3, []string{dir})
			} else {
				f, err = c.Screenshot(context.Background(), target, []string{dir})
			}
			if len(r.cmds) != 1 || slices.ContainsFunc(r.cmds[0].Args, func(a string) bool { return strings.Contains(a, dir) }) {
				t.Fatalf("the program saw the target folder: %+v", r.cmds)
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				if _, err := os.Stat(target); err == nil {
					t.Fatal("a file was saved")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(target)
			if err != nil || fi.Mode().Perm() != 0o600 || f.Path != target || f.Bytes != fi.Size() {
				t.Fatalf("file %+v, stat %v %v", f, fi, err)
			}
			if !tt.audio && (f.Width != 3 || f.Height != 2 || f.Format != "png") {
				t.Fatalf("file %+v", f)
			}
			if tt.audio && (f.Seconds != 3 || f.Format != "wav" || r.cmds[0].Interrupt != 3*time.Second) {
				t.Fatalf("file %+v, command %+v", f, r.cmds[0])
			}
		})
	}
}

// TestDefaultTargetFollowsTheSeedsRule: with no path, ~/Desktop when
// file_dirs allows it, else the only folder, else an error naming them.
func TestDefaultTargetFollowsTheSeedsRule(t *testing.T) {
	home := t.TempDir()
	desk, a, b := filepath.Join(home, "Desktop"), t.TempDir(), t.TempDir()
	os.Mkdir(desk, 0o700)
	for _, tt := range []struct {
		name string
		path string
		dirs []string
		want string
	}{
		{"given path", "/x/y.png", []string{a}, "/x/y.png"},
		{"Desktop allowed", "", []string{a, home}, filepath.Join(desk, "n.png")},
		{"the only folder", "", []string{a}, filepath.Join(a, "n.png")},
		{"two folders", "", []string{a, b}, "path is required: this profile may write in " + a + " or " + b + ", so name a file inside one of them"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultTarget(tt.path, home, tt.dirs, "n.png")
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// server serves c's tools to a profile with file_dirs dirs.
func server(t *testing.T, c *Capturer, shotWhy, recWhy string, dirs ...string) map[string]*mcp.ClientSession {
	t.Helper()
	p := &mcpserver.Profile{Access: "write", FileDirs: dirs}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"capture", "status"}, Profile: p}, Service(c, shotWhy, recWhy))
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Sessions(t, srv)
}
