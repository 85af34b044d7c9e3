//go:build unix

package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
)

// TestCaptureToolsThroughAClient: both tools through real go-sdk clients
// (stdio and HTTP): a screenshot and a recording land in file_dirs, the
// default target is the only folder, seconds goes through the numeric
// coercion, and the answer names the file.
func TestCaptureToolsThroughAClient(t *testing.T) {
	dir := t.TempDir()
	r := &fakeRunner{}
	c := newCapturer(r, "")
	for name, cs := range server(t, c, "", "", dir) {
		t.Run(name, func(t *testing.T) {
			r.write = writes(pngBytes(4, 4))
			target := filepath.Join(dir, name+".png")
			isErr, text, data := mcptest.Call(t, cs, "capture_screenshot", `{"path":"`+target+`"}`)
			if isErr || data["path"] != target || data["format"] != "png" || data["program"] != "import" {
				t.Fatalf("screenshot: %v %s %v", isErr, text, data)
			}
			r.write = writes(wav)
			isErr, text, data = mcptest.Call(t, cs, "capture_audio", `{"path":"`+filepath.Join(dir, name+".wav")+`","seconds":"2"}`)
			if isErr || data["seconds"] != float64(2) || data["format"] != "wav" {
				t.Fatalf("audio: %v %s %v", isErr, text, data)
			}
			isErr, text, _ = mcptest.Call(t, cs, "capture_audio", `{"seconds":61}`)
			if !isErr || !strings.Contains(text, "seconds") {
				t.Fatalf("seconds 61: %v %s", isErr, text)
			}
		})
	}
	// The default target: the only folder, a name from the pinned clock.
	r.write = writes(pngBytes(4, 4))
	cs := server(t, c, "", "", dir)["stdio"]
	isErr, text, data := mcptest.Call(t, cs, "capture_screenshot", `{}`)
	if want := filepath.Join(dir, "Screenshot "+c.Now().Format("2006-01-02 at 15.04.05")+".png"); isErr || data["path"] != want {
		t.Fatalf("default target: %v %s %v, want %s", isErr, text, data, want)
	}
}

// TestCaptureFileRulesRedTeam: every way out of file_dirs a caller could
// try with capture's path is refused before the program runs, and nothing
// outside changes: traversal, a linked folder, a link or dangling link at
// the target, an existing file (never replaced), a FIFO, a device, a
// relative path.
func TestCaptureFileRulesRedTeam(t *testing.T) {
	root := t.TempDir()
	dir, outside := filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	os.Mkdir(dir, 0o700)
	os.Mkdir(outside, 0o700)
	os.WriteFile(filepath.Join(dir, "taken.png"), []byte("keep"), 0o600)
	os.WriteFile(filepath.Join(outside, "victim.png"), []byte("keep"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Symlink(filepath.Join(outside, "victim.png"), filepath.Join(dir, "link.png"))
	os.Symlink(filepath.Join(outside, "new.png"), filepath.Join(dir, "dangling.png"))
	os.Symlink("/dev/null", filepath.Join(dir, "null.png"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &fakeRunner{write: writes(pngBytes(2, 2))}
	cs := server(t, newCapturer(r, ""), "", "", dir)["stdio"]
	for _, tt := range []struct{ name, path, want string }{
		{"traversal", dir + "/../outside/x.png", "outside the folders"},
		{"outside", filepath.Join(outside, "x.png"), "outside the folders"},
		{"through a linked folder", filepath.Join(dir, "escape", "x.png"), "outside the folders"},
		{"link to a file outside", filepath.Join(dir, "link.png"), "symbolic link"},
		{"dangling link", filepath.Join(dir, "dangling.png"), "symbolic link"},
		{"link to a device", filepath.Join(dir, "null.png"), "symbolic link"},
		{"device", "/dev/null", "outside the folders"},
		{"fifo", filepath.Join(dir, "fifo.png"), "not a regular file"},
		{"existing file", filepath.Join(dir, "taken.png"), "already exists"},
		{"relative", "x.png", "absolute"},
		{"folder", dir + "/", "not a folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(r.cmds)
			isErr, text, _ := mcptest.Call(t, cs, "capture_screenshot", fmt.Sprintf(`{"path":%q}`, tt.path))
			if !isErr || !strings.Contains(text, tt.want) {
				t.Fatalf("isError %v %q, want %q", isErr, text, tt.want)
			}
			if len(r.cmds) != before {
				t.Fatal("the program ran for a refused path")
			}
		})
	}
	for _, f := range []string{filepath.Join(dir, "taken.png"), filepath.Join(outside, "victim.png")} {
		if b, _ := os.ReadFile(f); string(b) != "keep" {
			t.Fatalf("%s changed", f)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.png")); err == nil {
		t.Fatal("a file appeared outside through the dangling link")
	}
}

// TestAToolWithoutAProgramIsAbsentWithItsReason: a capture with no
// working program is not listed, and get_status gives its sentence.
func TestAToolWithoutAProgramIsAbsentWithItsReason(t *testing.T) {
	why := "no audio recording program works here (arecord is not installed)"
	c := newCapturer(&fakeRunner{}, "")
	c.Recorder.Path = ""
	cs := server(t, c, "", why, t.TempDir())["stdio"]
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if strings.Contains(strings.Join(names, " "), "capture_audio") || !strings.Contains(strings.Join(names, " "), "capture_screenshot") {
		t.Fatalf("tools %v", names)
	}
	_, text, _ := mcptest.Call(t, cs, "get_status", `{}`)
	if !strings.Contains(text, why) {
		t.Fatalf("get_status does not give the reason: %s", text)
	}
}
