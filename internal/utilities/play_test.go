//go:build unix

package utilities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/proc"
)

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

// TestEachPlatformFindsItsPlayerOrSaysWhy pins every player's command on
// every OS, and the sentence when none works.
func TestEachPlatformFindsItsPlayerOrSaysWhy(t *testing.T) {
	const f = "/private/tmp/s/sound.wav"
	run := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}
	for _, tt := range []struct {
		name     string
		host     proc.Host
		wantPath string
		wantArgs []string
		why      string
	}{
		{"macOS afplay", fakeHost("darwin", []string{"afplay"}, nil), "/usr/bin/afplay", []string{f}, ""},
		{"PipeWire", fakeHost("linux", []string{"pw-play", "paplay", "aplay"}, run, "/run/user/1/pipewire-0"), "/fake/bin/pw-play", []string{f}, ""},
		{"PulseAudio", fakeHost("linux", []string{"pw-play", "paplay"}, run, "/run/user/1/pulse/native"), "/fake/bin/paplay", []string{f}, ""},
		{"ALSA", fakeHost("linux", []string{"aplay"}, nil, "/dev/snd/pcmC0D0p"), "/fake/bin/aplay", []string{"-q", "-D", "default", f}, ""},
		{"nothing works", fakeHost("linux", []string{"pw-play", "aplay"}, nil), "", nil,
			"no sound playing program works here (pw-play finds no PipeWire socket ($XDG_RUNTIME_DIR/pipewire-0); paplay is not installed; aplay finds no ALSA playback device (/dev/snd)): install pipewire-bin, pulseaudio-utils or alsa-utils"},
		{"macOS without afplay", fakeHost("darwin", nil, nil), "", nil, "no sound playing program works here (afplay is not installed)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, why := FindPlayer(tt.host)
			if why != tt.why {
				t.Fatalf("why = %q\nwant  %q", why, tt.why)
			}
			if why != "" {
				return
			}
			c := p.Command(f, 9, time.Minute)
			if c.Path != tt.wantPath || !slices.Equal(c.Args, tt.wantArgs) || c.Interrupt != 9*time.Second {
				t.Fatalf("command %s %q interrupt %v", c.Path, c.Args, c.Interrupt)
			}
		})
	}
}

type fakeRunner struct {
	cmds []proc.Command
	seen []byte
	res  proc.Result
}

func (f *fakeRunner) Run(_ context.Context, c proc.Command) (proc.Result, error) {
	f.cmds = append(f.cmds, c)
	f.seen, _ = os.ReadFile(c.Args[len(c.Args)-1])
	return f.res, nil
}

var wav = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 32)...)

func server(t *testing.T, p *Player, dirs ...string) *mcp.ClientSession {
	t.Helper()
	prof := &mcpserver.Profile{Access: "read", FileDirs: dirs}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: prof}, mcpserver.Filters{Toolsets: []string{"utilities", "status"}, Profile: prof}, Service(p, ""))
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Sessions(t, srv)["stdio"]
}

// TestPlaySoundThroughAClient: the player gets a private copy of the
// checked file (never the caller's path), seconds bounds it through the
// numeric coercion, and both transports answer.
func TestPlaySoundThroughAClient(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "ding.wav")
	os.WriteFile(src, wav, 0o600)
	r := &fakeRunner{}
	p := &Player{Program: proc.Program{Name: "aplay", Path: "/fake/bin/aplay", Args: func(f string, _ int) []string { return aplayArgs("default", f) }, Interrupt: true}, Runner: r}
	prof := &mcpserver.Profile{Access: "read", FileDirs: []string{dir}}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: prof}, mcpserver.Filters{Toolsets: []string{"utilities"}, Profile: prof}, Service(p, ""))
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range mcptest.Sessions(t, srv) {
		t.Run(name, func(t *testing.T) {
			isErr, text, data := mcptest.Call(t, cs, "utilities_play_sound", `{"path":"`+src+`","seconds":"4"}`)
			if isErr || data["format"] != "wav" || data["program"] != "aplay" || data["path"] != src {
				t.Fatalf("%v %s %v", isErr, text, data)
			}
			c := r.cmds[len(r.cmds)-1]
			played := c.Args[len(c.Args)-1]
			if strings.HasPrefix(played, dir) || string(r.seen) != string(wav) || c.Interrupt != 4*time.Second {
				t.Fatalf("player got %s (%d bytes), interrupt %v", played, len(r.seen), c.Interrupt)
			}
			if _, err := os.Stat(played); err == nil {
				t.Fatal("the private copy was left behind")
			}
			if isErr, text, _ := mcptest.Call(t, cs, "utilities_play_sound", `{"path":"`+src+`","seconds":0}`); !isErr || !strings.Contains(text, "seconds") {
				t.Fatalf("seconds 0: %v %s", isErr, text)
			}
		})
	}
}

// TestPlaySoundFileRulesRedTeam: utilities_play_sound reads only a
// regular sound file inside file_dirs: traversal, links out (file and
// folder), a device, a FIFO (which would block an open), a file that is
// not a sound and a relative path are refused before any player runs.
func TestPlaySoundFileRulesRedTeam(t *testing.T) {
	root := t.TempDir()
	dir, outside := filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	os.Mkdir(dir, 0o700)
	os.Mkdir(outside, 0o700)
	os.WriteFile(filepath.Join(outside, "secret.wav"), wav, 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a sound"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Symlink(filepath.Join(outside, "secret.wav"), filepath.Join(dir, "link.wav"))
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.wav"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wav"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &fakeRunner{}
	cs := server(t, &Player{Program: AplayOn("/fake/bin/aplay", "default"), Runner: r}, dir)
	for _, tt := range []struct{ name, path, want string }{
		{"traversal", dir + "/../outside/secret.wav", "outside the folders"},
		{"outside", filepath.Join(outside, "secret.wav"), "outside the folders"},
		{"link to a file outside", filepath.Join(dir, "link.wav"), "outside the folders"},
		{"through a linked folder", filepath.Join(dir, "escape", "secret.wav"), "outside the folders"},
		{"link to a device", filepath.Join(dir, "zero.wav"), "outside the folders"},
		{"device", "/dev/zero", "outside the folders"},
		{"fifo", filepath.Join(dir, "fifo.wav"), "not a regular file"},
		{"not a sound", filepath.Join(dir, "notes.txt"), "is not a sound file"},
		{"relative", "ding.wav", "absolute"},
		{"missing", filepath.Join(dir, "nope.wav"), "does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isErr, text, _ := mcptest.Call(t, cs, "utilities_play_sound", fmt.Sprintf(`{"path":%q}`, tt.path))
			if !isErr || !strings.Contains(text, tt.want) {
				t.Fatalf("isError %v %q, want %q", isErr, text, tt.want)
			}
		})
	}
	if len(r.cmds) != 0 {
		t.Fatalf("a player ran: %+v", r.cmds)
	}
}

// TestPlaySoundIsAbsentWithoutFileDirs: with no file_dirs there is no
// folder to read from, so the tool is not registered.
func TestPlaySoundIsAbsentWithoutFileDirs(t *testing.T) {
	cs := server(t, &Player{Program: AplayOn("/fake/bin/aplay", "default"), Runner: &fakeRunner{}})
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "utilities_play_sound" {
			t.Fatal("registered without file_dirs")
		}
	}
}

// TestRealPlaybackThroughALSANull: a tone made by sox plays through aplay
// on ALSA's null device, through a real client.
func TestRealPlaybackThroughALSANull(t *testing.T) {
	need := func(name, pkg string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: ./scripts/system-packages installs %s", name, pkg)
			}
			t.Skipf("%s is not installed (./scripts/system-packages installs %s)", name, pkg)
		}
		return p
	}
	sox, aplay := need("sox", "sox"), need("aplay", "alsa-utils")
	dir := t.TempDir()
	tone := filepath.Join(dir, "tone.wav")
	if out, err := exec.Command(sox, "-n", "-r", "8000", "-c", "1", tone, "synth", "0.2", "sine", "440").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	cs := server(t, &Player{Program: AplayOn(aplay, "null"), Runner: proc.ExecRunner{}}, dir)
	isErr, text, data := mcptest.Call(t, cs, "utilities_play_sound", `{"path":"`+tone+`","seconds":5}`)
	if isErr || data["format"] != "wav" || data["stopped"] != false {
		t.Fatalf("%v %s %v", isErr, text, data)
	}
}
