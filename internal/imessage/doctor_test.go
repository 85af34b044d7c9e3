package imessage

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

func TestCheckDatabase(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "macos15")
	populate(f)
	checks := CheckDatabase(ctx, f.path)
	names := []string{}
	for _, c := range checks {
		names = append(names, c.Name)
		if !c.OK {
			t.Errorf("%s failed: %s", c.Name, c.Detail)
		}
	}
	if strings.Join(names, ",") != "messages database found,messages database readable,schema capabilities,journal mode" {
		t.Errorf("checks = %v", names)
	}
	if d := checks[2].Detail; !strings.Contains(d, "edits") || !strings.Contains(d, "recently deleted") || strings.Contains(d, "not in this schema") {
		t.Errorf("macOS 15 capabilities: %s", d)
	}
	if d := checks[3].Detail; !strings.Contains(d, "delete") {
		t.Errorf("journal check: %s", d)
	}

	old := newFixture(t, "iOS6.1.6")
	populate(old)
	checks = CheckDatabase(ctx, old.path)
	if d := checks[2].Detail; !strings.Contains(d, "not in this schema") || !strings.Contains(d, "tapbacks") {
		t.Errorf("iOS 6 capabilities should list what is missing: %s", d)
	}

	live := filepath.Join(t.TempDir(), "chat.db")
	w := newLiveWriter(t, live)
	w.commit(0, 3)
	checks = CheckDatabase(ctx, live)
	if d := checks[len(checks)-1].Detail; !strings.Contains(d, "wal") || !strings.Contains(d, "chat.db-wal present") {
		t.Errorf("WAL check: %s", d)
	}

	// A refused read-only open is a failed check with the fix, not a silent
	// read of a copy.
	openHook = func(string) error { return errors.New("authorization denied (23)") }
	checks = CheckDatabase(ctx, f.path)
	openHook = nil
	if last := checks[len(checks)-1]; last.Name != "messages database readable" || last.OK || last.Fix == "" || !strings.Contains(last.Detail, "authorization denied") {
		t.Errorf("refused open: %+v", checks)
	}

	for _, c := range []struct {
		name, path, detail string
	}{
		{"missing", filepath.Join(t.TempDir(), "chat.db"), "does not exist"},
		{"folder", t.TempDir(), "is a folder"},
		{"not messages", writeTemp(t, "SQLite? no. plain text that is not a database at all, long enough for a header"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			checks := CheckDatabase(ctx, c.path)
			last := checks[len(checks)-1]
			if last.OK || last.Fix == "" || !strings.Contains(last.Detail, c.detail) {
				t.Errorf("checks = %+v", checks)
			}
		})
	}
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "x.db")
	os.WriteFile(p, []byte(content), 0o600)
	return p
}

func TestResolvePath(t *testing.T) {
	home := t.TempDir()
	liveDB := filepath.Join(home, "Library", "Messages", "chat.db")
	copyDB := filepath.Join(t.TempDir(), "copy", "chat.db")
	cases := []struct {
		db, stored, want string // want "" = refused
	}{
		{liveDB, "~/Library/Messages/Attachments/ab/11/G/IMG.jpeg", filepath.Join(home, "Library/Messages/Attachments/ab/11/G/IMG.jpeg")},
		{liveDB, "~/Library/Messages/StickerCache/x/s.heic", filepath.Join(home, "Library/Messages/StickerCache/x/s.heic")},
		{liveDB, filepath.Join(home, "Library/Messages/Attachments/a.png"), filepath.Join(home, "Library/Messages/Attachments/a.png")},
		{liveDB, "~/Library/Messages/../../.ssh/id_ed25519", ""},
		{liveDB, "~/.ssh/id_ed25519", ""},
		{liveDB, "/etc/passwd", ""},
		{liveDB, "Attachments/../../../../etc/passwd", ""},
		{copyDB, "~/Library/Messages/Attachments/ab/IMG.jpeg", filepath.Join(filepath.Dir(copyDB), "Attachments/ab/IMG.jpeg")},
		{copyDB, "~/Library/SMS/Attachments/ab/IMG.jpeg", filepath.Join(filepath.Dir(copyDB), "Attachments/ab/IMG.jpeg")},
		{copyDB, "Attachments/ab/IMG.jpeg", filepath.Join(filepath.Dir(copyDB), "Attachments/ab/IMG.jpeg")},
		{copyDB, "~/Library/Messages/Attachments/../../../x", ""},
		{copyDB, "", ""},
	}
	for _, c := range cases {
		r := &Reader{path: c.db, home: home, log: slog.Default()}
		got, err := r.resolvePath(c.stored)
		if c.want == "" {
			if c.stored != "" && err == nil {
				t.Errorf("%s on %s: resolved to %s, want refusal", c.stored, c.db, got)
			}
			if c.stored == "" && (got != "" || err != nil) {
				t.Errorf("empty path: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s on %s = %q, %v; want %q", c.stored, c.db, got, err, c.want)
		}
	}
}

// TestColumnDecodersReadEveryStoredForm: the helpers decoding chat.db
// columns read every form stored there (associated_message_guid with "p:N/"
// or "bp:", part indexes, balloon bundle ids, the chat kind from guid and
// style, the MIME type from UTI or file name, Apple times in seconds or
// nanoseconds) and fall back on anything else: part 0, no part, a group, no
// MIME type, an unset time.
func TestColumnDecodersReadEveryStoredForm(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		part int
	}{
		{"p:0/ABC", "ABC", 0}, {"p:3/ABC", "ABC", 3}, {"bp:ABC", "ABC", 0}, {"ABC", "ABC", 0},
		{"p:x/ABC", "ABC", 0}, {"p:-2/ABC", "ABC", 0}, {"p:ABC", "ABC", 0}, {"", "", 0},
	} {
		g, p := parseAssociated(c.in)
		if g != c.want || p != c.part {
			t.Errorf("parseAssociated(%q) = %q, %d", c.in, g, p)
		}
	}
	for in, want := range map[string]int{"0:0:29": 0, "2:10:4": 2, "1": 1, "": -1, "x:1": -1, "-1:0": -1} {
		if got := partIndex([]byte(in)); got != want {
			t.Errorf("partIndex(%q) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"com.apple.messages.MSMessageExtensionBalloonPlugin:0000000000:com.apple.PassbookUIService.PeerPaymentMessagesExtension": "com.apple.PassbookUIService.PeerPaymentMessagesExtension",
		"com.apple.messages.URLBalloonProvider": "com.apple.messages.URLBalloonProvider",
		"a:b:":                                  "a:b:",
	} {
		if got := appID([]byte(in)); got != want {
			t.Errorf("appID(%q) = %q", in, got)
		}
	}
	for _, c := range []struct {
		guid, ident string
		n           int
		style       int64
		want        model.ConversationKind
	}{
		{"iMessage;+;chat1", "chat1", 0, 45, model.KindGroup},
		{"iMessage;-;+1555", "+1555", 1, 43, model.KindDirect},
		{"SMS;-;+1555", "+1555", 3, 45, model.KindGroup},
		{"weird", "chat12345", 0, 0, model.KindGroup},
		{"weird", "+1555", 0, 43, model.KindGroup},
		{"weird", "+1555", 0, 45, model.KindDirect},
	} {
		if got := chatKind(c.guid, c.ident, c.n, c.style); got != c.want {
			t.Errorf("chatKind(%+v) = %s", c, got)
		}
	}
	for _, c := range []struct{ uti, name, want string }{
		{"public.jpeg", "", "image/jpeg"}, {"com.apple.coreaudio-format", "Audio.caf", "audio/x-caf"},
		{"", "IMG.HEIC", "image/heic"}, {"dyn.unknown", "file.bin", ""},
	} {
		if got := mimeFor(c.uti, c.name); got != c.want {
			t.Errorf("mimeFor(%q, %q) = %q", c.uti, c.name, got)
		}
	}
	if tm := appleTime(0); !tm.IsZero() {
		t.Error("0 must be unset")
	}
	if tm := appleTime(-5); !tm.IsZero() {
		t.Error("negative must be unset")
	}
	if a, b := appleTime(731514600), appleTime(731514600*1_000_000_000); !a.Equal(b) {
		t.Errorf("s vs ns: %v %v", a, b)
	}
}

// FuzzSummary: no message_summary_info blob can panic the reader or leave a
// message inconsistent.
func FuzzSummary(f *testing.F) {
	f.Add([]byte("bplist00"))
	f.Add([]byte{0x52, 'r', 'p'})
	f.Fuzz(func(t *testing.T, blob []byte) {
		var m model.Message
		applySummary(blob, 0, 1, &m, slog.New(slog.DiscardHandler))
		if m.Unsent && len(m.UnsentParts) == 0 && m.Text != "" {
			t.Fatalf("unsent with text and no parts: %+v", m)
		}
		for _, p := range m.UnsentParts {
			if p < 0 {
				t.Fatalf("negative part %d", p)
			}
		}
	})
}

// FuzzResolvePath: whatever a database stores, a resolved attachment path
// stays inside the Messages folders or the database's own folder.
func FuzzResolvePath(f *testing.F) {
	f.Add("~/Library/Messages/Attachments/a/b.jpg")
	f.Add("~/Library/Messages/../../x")
	f.Add("/etc/passwd")
	f.Add("Attachments/../../x")
	f.Fuzz(func(t *testing.T, stored string) {
		home := "/home/u"
		r := &Reader{path: "/data/copy/chat.db", home: home, log: slog.New(slog.DiscardHandler)}
		p, err := r.resolvePath(stored)
		if err != nil || p == "" {
			return
		}
		ok := false
		for _, root := range []string{"/home/u/Library/Messages", "/home/u/Library/SMS", "/data/copy"} {
			if within(root, p) {
				ok = true
			}
		}
		if !ok || strings.Contains(filepath.ToSlash(p), "/../") {
			t.Fatalf("%q resolved outside the roots: %q", stored, p)
		}
	})
}
