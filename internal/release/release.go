// Package release builds Tidings' release artefacts reproducibly
// (docs/releases.md): one archive per target with the binary, its licence
// and README; the `go version -m` listing of each binary (its module
// bill of materials); an MCP Bundle per macOS architecture; SHA256SUMS; the
// Homebrew formula rendered from the archives; and the container
// definition. Nothing is published from here.
package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Target is one GOOS/GOARCH pair.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Targets are the release targets.
var Targets = []Target{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "arm64"}, {"linux", "amd64"}}

// Options configure a release.
type Options struct {
	Repo    string // repository root (holds go.mod)
	Out     string // output folder (created)
	Version string // "1.2.3"
	// Epoch is the time stamped on every archive entry: the commit's time,
	// so the same commit gives the same bytes.
	Epoch time.Time
	// URLBase is where the archives will be downloadable from; the formula
	// points there.
	URLBase string
	Targets []Target
	Log     io.Writer
}

// Artefacts lists what Build wrote, by file name.
type Artefacts struct {
	Archives map[Target]string // tar.gz per target
	Bundles  map[Target]string // .mcpb per darwin target
	Sums     map[string]string // file name -> sha256 hex
	Formula  string
	Docker   string
}

// ArchiveName is the archive's base name without extension.
func ArchiveName(version string, t Target) string {
	return fmt.Sprintf("tidings_%s_%s_%s", version, t.OS, t.Arch)
}

// Build writes the release into o.Out.
func Build(ctx context.Context, o Options) (*Artefacts, error) {
	if o.Version == "" || strings.ContainsAny(o.Version, "/ \n\"") {
		return nil, fmt.Errorf("release: bad version %q", o.Version)
	}
	if o.Targets == nil {
		o.Targets = Targets
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	a := &Artefacts{Archives: map[Target]string{}, Bundles: map[Target]string{}, Sums: map[string]string{}}
	license, err := os.ReadFile(filepath.Join(o.Repo, "LICENSE"))
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(o.Repo, "README.md"))
	if err != nil {
		return nil, err
	}
	manifest, err := os.ReadFile(filepath.Join(o.Repo, "packaging", "mcpb", "manifest.json"))
	if err != nil {
		return nil, err
	}
	for _, t := range o.Targets {
		fmt.Fprintf(o.Log, "build %s\n", t)
		bin, err := buildBinary(ctx, o, t)
		if err != nil {
			return nil, err
		}
		name := ArchiveName(o.Version, t)
		files := []file{
			{name + "/tidings", bin, 0o755},
			{name + "/LICENSE", license, 0o644},
			{name + "/README.md", readme, 0o644},
		}
		tgz, err := tarGz(files, o.Epoch)
		if err != nil {
			return nil, err
		}
		a.Archives[t] = name + ".tar.gz"
		if err := write(o.Out, a.Archives[t], tgz, a.Sums); err != nil {
			return nil, err
		}
		// The binary's module listing: every dependency with its version
		// and checksum, read back from the binary itself.
		listing, err := goVersionM(ctx, o.Repo, bin)
		if err != nil {
			return nil, err
		}
		if err := write(o.Out, name+".buildinfo.txt", listing, nil); err != nil {
			return nil, err
		}
		if t.OS == "darwin" {
			m := bytes.ReplaceAll(manifest, []byte("{{VERSION}}"), []byte(o.Version))
			bundle, err := zipFiles([]file{
				{"manifest.json", m, 0o644},
				{"server/tidings", bin, 0o755},
				{"LICENSE", license, 0o644},
			}, o.Epoch)
			if err != nil {
				return nil, err
			}
			a.Bundles[t] = name + ".mcpb"
			if err := write(o.Out, a.Bundles[t], bundle, a.Sums); err != nil {
				return nil, err
			}
		}
	}
	formula, err := RenderFormula(filepath.Join(o.Repo, "packaging", "homebrew", "tidings.rb.tmpl"), o, a)
	if err != nil {
		return nil, err
	}
	a.Formula = "tidings.rb"
	if err := write(o.Out, a.Formula, formula, nil); err != nil {
		return nil, err
	}
	docker, err := os.ReadFile(filepath.Join(o.Repo, "packaging", "container", "Dockerfile"))
	if err != nil {
		return nil, err
	}
	a.Docker = "Dockerfile"
	if err := write(o.Out, a.Docker, docker, nil); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(a.Sums))
	for n := range a.Sums {
		names = append(names, n)
	}
	slices.Sort(names)
	var sums bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&sums, "%s  %s\n", a.Sums[n], n) // sha256sum's format: `sha256sum -c SHA256SUMS` checks it
	}
	if err := write(o.Out, "SHA256SUMS", sums.Bytes(), nil); err != nil {
		return nil, err
	}
	return a, nil
}

func write(dir, name string, data []byte, sums map[string]string) error {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return err
	}
	if sums != nil {
		h := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(h[:])
	}
	return nil
}

// buildBinary cross-compiles cmd/tidings: no cgo (one static binary per
// target), -trimpath (no local paths), the version stamped, symbols
// stripped. The Go toolchain's builds are reproducible under these flags.
func buildBinary(ctx context.Context, o Options, t Target) ([]byte, error) {
	dir, err := os.MkdirTemp("", "tidings-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "tidings")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X main.Version="+o.Version, "-o", out, "./cmd/tidings")
	cmd.Dir = o.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %v\n%s", t, err, b)
	}
	return os.ReadFile(out)
}

func goVersionM(ctx context.Context, repo string, bin []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "tidings-bin-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(bin); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	cmd := exec.CommandContext(ctx, "go", "version", "-m", f.Name())
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go version -m: %w", err)
	}
	// The first line names the temporary file; name the binary instead.
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		b = append([]byte("tidings"), b[i:]...)
	}
	return b, nil
}

type file struct {
	name string
	data []byte
	mode int64
}

// tarGz writes a gzip'd tar with fixed owners, times and order, and a
// gzip header without a name or time: the bytes depend on the content only.
func tarGz(files []file, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipFiles writes a zip with fixed times and Unix modes (the bundle's
// binary must stay executable).
func zipFiles(files []file, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: epoch.UTC().Truncate(2 * time.Second)}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RenderFormula fills the Homebrew template: {{VERSION}}, and
// {{URL os arch}} / {{SHA256 os arch}} from the archives.
func RenderFormula(tmplPath string, o Options, a *Artefacts) ([]byte, error) {
	tmpl, err := os.ReadFile(tmplPath)
	if err != nil {
		return nil, err
	}
	s := strings.ReplaceAll(string(tmpl), "{{VERSION}}", o.Version)
	for _, t := range Targets {
		name, ok := a.Archives[t]
		url, sum := "", ""
		if ok {
			url = strings.TrimSuffix(o.URLBase, "/") + "/" + name
			sum = a.Sums[name]
		}
		s = strings.ReplaceAll(s, "{{URL "+t.OS+" "+t.Arch+"}}", url)
		s = strings.ReplaceAll(s, "{{SHA256 "+t.OS+" "+t.Arch+"}}", sum)
	}
	if i := strings.Index(s, "{{"); i >= 0 {
		return nil, fmt.Errorf("formula template: unfilled placeholder near %q", s[i:min(len(s), i+30)])
	}
	return []byte(s), nil
}
