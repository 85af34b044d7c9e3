//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAddEntriesCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	added, err := AddEntries(dir, Blocked, []string{"+1 (555) 123-4567"}, "Therapist")
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || added[0].Key != "5551234567" {
		t.Fatalf("added = %+v", added)
	}
	if got, want := readString(t, Path(dir, Blocked)), "# Therapist\n+1 (555) 123-4567\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, ContactsDir): 0o700, Path(dir, Blocked): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %04o, want %04o", path, fi.Mode().Perm(), want)
		}
	}
	if p, err := Load(dir, Options{}); err != nil || p.AllowThread(Thread{Identifier: "5551234567"}).Allowed {
		t.Errorf("the written file does not block: %v", err)
	}
}

func TestAddEntriesPreservesAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	original := "# Therapist\n+15551234567\n\n# Attorney\nlawyer@example.com # since 2024\n"
	writeFile(t, Path(dir, Blocked), original, 0o600)

	added, err := AddEntries(dir, Blocked, []string{"555.123.4567", "LAWYER@example.com", "chat123456789", "chat123456789"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || added[0].Text != "chat123456789" {
		t.Fatalf("added = %+v, want only the chat id", added)
	}
	want := original + "chat123456789\n"
	if got := readString(t, Path(dir, Blocked)); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	// Again: nothing to add, file untouched.
	fi1, _ := os.Stat(Path(dir, Blocked))
	added, err = AddEntries(dir, Blocked, []string{"chat123456789", "(555) 123-4567"}, "dup")
	if err != nil || len(added) != 0 {
		t.Fatalf("second add: %+v, %v", added, err)
	}
	fi2, _ := os.Stat(Path(dir, Blocked))
	if !os.SameFile(fi1, fi2) || readString(t, Path(dir, Blocked)) != want {
		t.Error("idempotent add rewrote the file")
	}
}

func TestAddEntriesRejectsBadEntriesBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	if _, err := AddEntries(dir, Blocked, []string{"+15551234567", "mom"}, ""); err == nil {
		t.Fatal("short entry accepted")
	}
	if _, err := os.Stat(Path(dir, Blocked)); !os.IsNotExist(err) {
		t.Error("a file was written despite the error")
	}
	if _, err := AddEntries(dir, Blocked, []string{"+15551234567"}, "two\nlines"); err == nil {
		t.Error("multi-line comment accepted")
	}
}

func TestAddEntriesKeepsFileWithoutTrailingNewline(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, Path(dir, Allowed), "friend@example.com", 0o600)
	if _, err := AddEntries(dir, Allowed, []string{"+14155550001"}, ""); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, Path(dir, Allowed)); got != "friend@example.com\n+14155550001\n" {
		t.Errorf("file = %q", got)
	}
}

func TestRemoveEntries(t *testing.T) {
	dir := t.TempDir()
	original := strings.Join([]string{
		"# Therapist",
		"+15551234567",
		"(555) 123-4567 # duplicate in another format",
		"123-4567",
		"# Attorney",
		"Lawyer@Example.com",
		"chat123456789",
		"secret-project",
		"",
	}, "\n")
	writeFile(t, Path(dir, Blocked), original, 0o600)
	removed, err := RemoveEntries(dir, Blocked, []string{"555.123.4567"})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Fatalf("removed %d entries (%+v), want the two full formats and the 7-digit suffix", len(removed), removed)
	}
	want := "# Therapist\n# Attorney\nLawyer@Example.com\nchat123456789\nsecret-project\n"
	if got := readString(t, Path(dir, Blocked)); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	removed, err = RemoveEntries(dir, Blocked, []string{"lawyer@EXAMPLE.com", "CHAT123456789"})
	if err != nil || len(removed) != 2 {
		t.Fatalf("remove email+chat: %+v, %v", removed, err)
	}
	// Nothing left to remove: no error, no write.
	removed, err = RemoveEntries(dir, Blocked, []string{"+15551234567"})
	if err != nil || len(removed) != 0 {
		t.Fatalf("idempotent remove: %+v, %v", removed, err)
	}
	if got := readString(t, Path(dir, Blocked)); got != "# Therapist\n# Attorney\nsecret-project\n" {
		t.Errorf("file = %q", got)
	}
	// A handle does not remove a substring entry that merely contains it.
	if removed, _ := RemoveEntries(dir, Blocked, []string{"me@secret-project.example"}); len(removed) != 0 {
		t.Errorf("substring entry removed by a handle: %+v", removed)
	}
}

func TestRemoveFromAllowlistKeepsShortNumbers(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, Path(dir, Allowed), "555-1234\n+14155551234\n", 0o600)
	removed, err := RemoveEntries(dir, Allowed, []string{"+1 415 555 1234"})
	if err != nil || len(removed) != 1 {
		t.Fatalf("removed %+v, %v", removed, err)
	}
	if got := readString(t, Path(dir, Allowed)); got != "555-1234\n" {
		t.Errorf("file = %q", got)
	}
}

func TestSetMode(t *testing.T) {
	dir := t.TempDir()
	if m, err := ReadMode(dir); err != nil || m != ModeBlocklist {
		t.Fatalf("default mode %s, %v", m, err)
	}
	if err := SetMode(dir, ModeAllowlist); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMode(dir); err != nil || m != ModeAllowlist {
		t.Fatalf("mode %s, %v", m, err)
	}
	writeFile(t, ModePath(dir), "# mine\nallowlist\n# trailing\n", 0o600)
	if err := SetMode(dir, ModeBlocklist); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, ModePath(dir)); got != "# mine\n# trailing\nblocklist\n" {
		t.Errorf("mode file = %q", got)
	}
	if err := SetMode(dir, "whitelist"); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestEditsRefuseUnsafeTargets(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.txt")
	writeFile(t, other, "", 0o600)
	if err := os.MkdirAll(filepath.Join(dir, ContactsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, Path(dir, Blocked)); err != nil {
		t.Fatal(err)
	}
	if _, err := AddEntries(dir, Blocked, []string{"+15551234567"}, ""); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("add through a symlink: %v", err)
	}
	if readString(t, other) != "" {
		t.Error("the symlink target was written")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ContactsDir))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestEntriesListsWhatIsWritten(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, Path(dir, Blocked), seedBlocklist, 0o600)
	es, err := Entries(dir, Blocked)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Text+"@"+e.Kind.String())
	}
	want := "+15551234567@phone lawyer@example.com@email chat123456789@chat id"
	if strings.Join(got, " ") != want {
		t.Errorf("entries = %q, want %q", strings.Join(got, " "), want)
	}
	if es[0].Line != 2 || es[2].Line != 8 {
		t.Errorf("line numbers %d, %d", es[0].Line, es[2].Line)
	}
}
