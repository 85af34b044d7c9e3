package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/conformance"
)

// need finds a program the packaging checks run; absent, the check skips
// (or fails under CI, which installs it: scripts/system-packages).
func need(t *testing.T, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; scripts/system-packages installs it — CI is set, so this is a failure, not a skip", prog)
		}
		t.Skipf("%s not found; run scripts/system-packages", prog)
	}
	return p
}

// npmTool returns the path of an npm package's CLI script in the interop
// tools, and node.
func npmTool(t *testing.T, rel string) (node, script string) {
	node, dir := conformance.Tools(t)
	script = filepath.Join(dir, "node_modules", rel)
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("%s missing from the interop tools: rerun scripts/interop-tools", rel)
	}
	return node, script
}

func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// readTarGz returns the archive's entries by name.
func readTarGz(t *testing.T, path string) map[string]*tar.Header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == ArchiveName("9.8.7", Target{"linux", "amd64"})+"/tidings" {
			body, _ := io.ReadAll(tr)
			ef, err := elf.NewFile(bytes.NewReader(body))
			if err != nil || ef.Machine != elf.EM_X86_64 {
				t.Errorf("linux/amd64 binary is not an x86-64 ELF: %v", err)
			}
		}
		out[h.Name] = h
	}
}

// One release build serves every check: building four targets is the slow
// part (about a minute per target on a cold cache).
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four release binaries")
	}
	repo := conformance.RepoRoot(t)
	out := t.TempDir()
	epoch := time.Unix(1764547200, 0) // literal date: a commit time stamped into archives; no clock reads it
	o := Options{Repo: repo, Out: out, Version: "9.8.7", Epoch: epoch, URLBase: "https://example.invalid/dl/v9.8.7/"}
	a, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("every target has an archive with the binary, licence and README", func(t *testing.T) {
		for _, tg := range Targets {
			name := ArchiveName("9.8.7", tg)
			entries := readTarGz(t, filepath.Join(out, a.Archives[tg]))
			bin := entries[name+"/tidings"]
			if bin == nil || bin.Mode&0o111 == 0 {
				t.Errorf("%s: binary missing or not executable: %+v", tg, bin)
				continue
			}
			for _, f := range []string{"LICENSE", "README.md"} {
				if entries[name+"/"+f] == nil {
					t.Errorf("%s: %s missing", tg, f)
				}
			}
			if !bin.ModTime.Equal(epoch) || bin.Uid != 0 || bin.Uname != "root" {
				t.Errorf("%s: entry not normalised: %v uid %d %s", tg, bin.ModTime, bin.Uid, bin.Uname)
			}
			listing, err := os.ReadFile(filepath.Join(out, name+".buildinfo.txt"))
			if err != nil || !bytes.Contains(listing, []byte("github.com/modelcontextprotocol/go-sdk")) ||
				!bytes.Contains(listing, []byte("GOOS="+tg.OS)) || !bytes.Contains(listing, []byte("-X main.Version=9.8.7")) {
				t.Errorf("%s: go version -m listing incomplete (%v):\n%s", tg, err, listing)
			}
		}
	})

	t.Run("SHA256SUMS matches the files", func(t *testing.T) {
		f, err := os.Open(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			sum, name, ok := strings.Cut(sc.Text(), "  ")
			data, err := os.ReadFile(filepath.Join(out, name))
			if !ok || err != nil || sha(data) != sum {
				t.Errorf("line %q does not match the file (%v)", sc.Text(), err)
			}
			n++
		}
		if want := len(Targets) + 2; n != want { // archives + two bundles
			t.Errorf("%d sums, want %d", n, want)
		}
	})

	t.Run("the same commit gives the same bytes", func(t *testing.T) {
		again := t.TempDir()
		o2 := o
		o2.Out, o2.Targets = again, []Target{{"darwin", "arm64"}}
		b, err := Build(context.Background(), o2)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{b.Archives[Target{"darwin", "arm64"}], b.Bundles[Target{"darwin", "arm64"}]} {
			x, _ := os.ReadFile(filepath.Join(out, name))
			y, _ := os.ReadFile(filepath.Join(again, name))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s differs between two builds of the same tree", name)
			}
		}
	})

	t.Run("the formula points at the archives", func(t *testing.T) {
		formula, err := os.ReadFile(filepath.Join(out, a.Formula))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(formula, []byte(`version "9.8.7"`)) {
			t.Error("formula version")
		}
		pairs := regexp.MustCompile(`url "([^"]+)"\s+sha256 "([0-9a-f]{64})"`).FindAllSubmatch(formula, -1)
		if len(pairs) != len(Targets) {
			t.Fatalf("%d url/sha256 pairs, want %d:\n%s", len(pairs), len(Targets), formula)
		}
		for _, p := range pairs {
			name := strings.TrimPrefix(string(p[1]), "https://example.invalid/dl/v9.8.7/")
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil || sha(data) != string(p[2]) {
				t.Errorf("url %s: archive missing or sha256 differs (%v)", p[1], err)
			}
		}
		ruby := need(t, "ruby")
		if b, err := exec.Command(ruby, "-c", filepath.Join(out, a.Formula)).CombinedOutput(); err != nil {
			t.Errorf("ruby -c: %v\n%s", err, b)
		}
	})

	t.Run("the MCP bundles validate and keep the binary executable", func(t *testing.T) {
		node, mcpb := npmTool(t, "@anthropic-ai/mcpb/dist/cli.js")
		for tg, name := range a.Bundles {
			zr, err := zip.OpenReader(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			var manifest []byte
			for _, f := range zr.File {
				switch f.Name {
				case "manifest.json":
					rc, _ := f.Open()
					manifest, _ = io.ReadAll(rc)
					rc.Close()
				case "server/tidings":
					if f.Mode()&0o111 == 0 {
						t.Errorf("%s: server/tidings not executable", tg)
					}
					rc, _ := f.Open()
					body, _ := io.ReadAll(rc)
					rc.Close()
					mf, err := macho.NewFile(bytes.NewReader(body))
					want := map[string]macho.Cpu{"arm64": macho.CpuArm64, "amd64": macho.CpuAmd64}[tg.Arch]
					if err != nil || mf.Cpu != want {
						t.Errorf("%s: server/tidings is not a %s Mach-O (%v)", tg, tg.Arch, err)
					}
				}
			}
			zr.Close()
			if !bytes.Contains(manifest, []byte(`"version": "9.8.7"`)) {
				t.Errorf("%s: manifest version not filled", tg)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(node, mcpb, "validate", filepath.Join(dir, "manifest.json")).CombinedOutput(); err != nil {
				t.Errorf("%s: mcpb validate: %v\n%s", tg, err, b)
			}
			if b, err := exec.Command(node, mcpb, "info", filepath.Join(out, name)).CombinedOutput(); err != nil || !bytes.Contains(b, []byte("tidings")) {
				t.Errorf("%s: mcpb info: %v\n%s", tg, err, b)
			}
		}
	})

	t.Run("the container definition lints", func(t *testing.T) {
		node, lint := npmTool(t, "dockerfile-utils/bin/dockerfile-utils")
		df := filepath.Join(out, a.Docker)
		if b, err := exec.Command(node, lint, "lint", df).CombinedOutput(); err != nil {
			t.Errorf("dockerfile-utils lint: %v\n%s", err, b)
		}
		data, _ := os.ReadFile(df)
		for _, want := range []string{"USER 65532", "TIDINGS_HTTP_TOKEN_FILE", "TIDINGS_READ_ONLY=true"} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("Dockerfile lacks %q (non-root, token required, read-only)", want)
			}
		}
	})
}

// A placeholder the template names but the release cannot fill is an error,
// not a formula with a hole in it.
func TestFormulaRefusesUnfilledPlaceholders(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "f.rb.tmpl")
	if err := os.WriteFile(tmpl, []byte(`url "{{URL plan9 386}}"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderFormula(tmpl, Options{Version: "1"}, &Artefacts{}); err == nil {
		t.Error("unfilled placeholder accepted")
	}
}
