package release

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/conformance"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// `go install github.com/tidings-mcp/tidings/cmd/tidings@VERSION` works as the
// README says: the committed tree, served as a module version by a file
// proxy, installs and reports that version. Dependencies come from the local
// module cache used as a second file proxy, so nothing leaves the machine.
func TestGoInstallFromAModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tidings from a module zip")
	}
	repo := conformance.RepoRoot(t)
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		t.Skip("not a git checkout: the module zip is made from the committed tree")
	}
	goEnv := func(k string) string {
		b, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	const path, version = "github.com/tidings-mcp/tidings", "v0.98.7" // v0 or v1: the module path has no /vN suffix
	proxy := t.TempDir()
	dir := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromVCS(zf, module.Version{Path: path, Version: version}, repo, "HEAD", ""); err != nil {
		t.Fatalf("module zip of HEAD: %v", err)
	}
	zf.Close()
	gomod, err := exec.Command("git", "-C", repo, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(gomod, []byte("\nreplace ")) {
		t.Fatal("go.mod has a replace directive: go install …@version ignores it and fails")
	}
	info, _ := json.Marshal(map[string]string{"Version": version, "Time": "2026-01-01T00:00:00Z"}) // literal date: module metadata, no clock reads it
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", path+"/cmd/tidings@"+version)
	cmd.Dir = t.TempDir() // outside the module: the way a user runs it
	cmd.Env = append(os.Environ(),
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(goEnv("GOMODCACHE"), "cache", "download"),
		"GOMODCACHE="+t.TempDir(), "GOSUMDB=off", "GOBIN="+bin, "GOTOOLCHAIN=local",
		"GOFLAGS=-modcacherw -trimpath", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "tidings"), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte("tidings 0.98.7\n")) || !bytes.Contains(out, []byte("module  "+version)) {
		t.Errorf("tidings version after go install:\n%s", out)
	}
}
