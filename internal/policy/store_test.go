//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	p1again, _ := s.Current()
	if p1again != p1 {
		t.Error("unchanged files were reloaded")
	}
	target := Thread{Identifier: "+15551234567"}
	if !p1.AllowThread(target).Allowed {
		t.Fatal("thread blocked before any entry")
	}

	// Block it through the editing API (temp + rename: a new inode).
	if _, err := AddEntries(dir, Blocked, []string{"(555) 123-4567"}, "therapist"); err != nil {
		t.Fatal(err)
	}
	p2, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	if p2.AllowThread(target).Allowed {
		t.Error("newly blocked thread still allowed after reload")
	}
	if p2.Fingerprint() == p1.Fingerprint() {
		t.Error("fingerprint did not change when an entry was added")
	}

	// A comment-only edit reloads but keeps the fingerprint.
	path := Path(dir, Blocked)
	data, _ := os.ReadFile(path)
	writeFile(t, path, "# a new comment that makes the file longer\n"+string(data), 0o600)
	p3, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p2 {
		t.Error("changed file was not reloaded")
	}
	if p3.Fingerprint() != p2.Fingerprint() {
		t.Error("a comment changed the fingerprint")
	}

	// A broken edit fails closed: no fallback to the previous policy.
	writeFile(t, path, string(data)+"mom\n", 0o600)
	if p, err := s.Current(); err == nil || p != nil {
		t.Fatalf("broken file: %v, %v; want an error", p, err)
	}
	if p, err := s.Current(); err == nil || p != nil {
		t.Fatalf("broken file, second call: %v, %v; want an error again", p, err)
	}

	// Fixing it recovers.
	writeFile(t, path, string(data), 0o600)
	p4, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	if p4.AllowThread(target).Allowed || p4.Fingerprint() != p2.Fingerprint() {
		t.Error("recovered policy differs")
	}

	// Mode switch and file removal are noticed.
	writeFile(t, ModePath(dir), "allowlist\n", 0o600)
	p5, _ := s.Current()
	if p5 == nil || p5.Mode() != ModeAllowlist {
		t.Fatalf("mode change not picked up: %v", p5)
	}
	if err := os.Remove(ModePath(dir)); err != nil {
		t.Fatal(err)
	}
	p6, _ := s.Current()
	if p6 == nil || p6.Mode() != ModeBlocklist {
		t.Fatal("removed mode file not picked up")
	}

	// Replacing the contacts directory by a symlink is noticed and refused.
	cdir := filepath.Join(dir, ContactsDir)
	if err := os.Rename(cdir, cdir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cdir+".old", cdir); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Current(); err == nil || p != nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlinked contacts dir: %v, %v", p, err)
	}
}

func TestNewStoreFailsOnBadPolicy(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, ModePath(dir), "maybe\n", 0o600)
	if s, err := NewStore(dir, Options{}); err == nil || s != nil {
		t.Fatalf("NewStore = %v, %v; want an error", s, err)
	}
}

func BenchmarkStoreCurrentUnchanged(b *testing.B) {
	dir := b.TempDir()
	if _, err := AddEntries(dir, Blocked, []string{"+15551234567"}, ""); err != nil {
		b.Fatal(err)
	}
	s, err := NewStore(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Current(); err != nil {
			b.Fatal(err)
		}
	}
}
