//go:build unix

package capture

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// need finds a program the real tests drive; absent, the test skips
// (fails when CI is set: ./scripts/system-packages installs it).
func need(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: ./scripts/system-packages installs %s", name, pkg)
		}
		t.Skipf("%s is not installed (./scripts/system-packages installs %s)", name, pkg)
	}
	return p
}

// xvfb starts a virtual X server on a display number it picks itself
// (-displayfd: free, and written only once the server is ready) and
// returns that display; the server stops when the test ends.
func xvfb(t *testing.T) string {
	t.Helper()
	bin := need(t, "Xvfb", "xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-displayfd", "3", "-screen", "0", "320x200x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		t.Fatalf("Xvfb gave no display number: %v", err)
	}
	return ":" + strings.TrimSpace(line)
}

// childEnv is this process's environment with DISPLAY set for the child
// only.
func childEnv(display string) []string {
	env := []string{"DISPLAY=" + display}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") {
			env = append(env, kv)
		}
	}
	return env
}

// TestRealScreenshotUnderXvfb: capture_screenshot through a real client
// runs ImageMagick's import against the test's own Xvfb and saves the
// screen, 320×200, as a PNG inside file_dirs.
func TestRealScreenshotUnderXvfb(t *testing.T) {
	imp := need(t, "import", "imagemagick")
	display := xvfb(t)
	dir := t.TempDir()
	c := newCapturer(proc.ExecRunner{}, "")
	c.Screenshotter = ImportOn(imp, childEnv(display))
	cs := server(t, c, "", "", dir)["stdio"]
	target := filepath.Join(dir, "screen.png")
	isErr, text, data := mcptest.Call(t, cs, "capture_screenshot", `{"path":"`+target+`"}`)
	if isErr || data["width"] != float64(320) || data["height"] != float64(200) || data["path"] != target {
		t.Fatalf("%v %s %v", isErr, text, data)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v %v", fi, err)
	}
}

// TestRealRecordingThroughALSANull: capture_audio through a real client
// runs arecord on ALSA's null device for one second and saves a WAV file.
func TestRealRecordingThroughALSANull(t *testing.T) {
	bin := need(t, "arecord", "alsa-utils")
	dir := t.TempDir()
	c := newCapturer(proc.ExecRunner{}, "")
	c.Recorder = ArecordOn(bin, "null")
	cs := server(t, c, "", "", dir)["stdio"]
	target := filepath.Join(dir, "rec.wav")
	isErr, text, data := mcptest.Call(t, cs, "capture_audio", `{"path":"`+target+`","seconds":1}`)
	if isErr || data["format"] != "wav" || data["bytes"].(float64) < 44100 {
		t.Fatalf("%v %s %v", isErr, text, data)
	}
}
