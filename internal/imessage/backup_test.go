package imessage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Known file ids (from the format reference; imessage-exporter's
// DEFAULT_PATH_IOS agrees for sms.db).
const (
	smsFileID         = "3d0d7e5fb2ce288813306e4d4636395e047a3d28"
	addressBookFileID = "31bb7ba8914766d4ba40d6dfb6113c8b614be442"
)

func TestFileID(t *testing.T) {
	for _, c := range []struct{ domain, rel, want string }{
		{homeDomain, smsPath, smsFileID},
		{homeDomain, addressBookDB, addressBookFileID},
		{homeDomain, addressBookImg, "cd6702cea29fe89cf280a76794405adb17f9a0ee"},
	} {
		if got := FileID(c.domain, c.rel); got != c.want {
			t.Errorf("FileID(%s, %s) = %s, want %s", c.domain, c.rel, got, c.want)
		}
	}
}

// synthBackup builds a synthetic, unencrypted backup folder: plists,
// Manifest.db from the real schema, sms.db from the iOS 11.2 schema with one
// attachment, the attachment file and an address book, each under its hashed
// name. It returns the folder and the attachment's ROWID.
type synthBackup struct {
	dir       string
	manifest  *fixture
	attRowID  int64
	attRowID2 int64
	attBytes  []byte
}

func newSynthBackup(t *testing.T) *synthBackup {
	t.Helper()
	b := &synthBackup{dir: t.TempDir(), attBytes: []byte("\x89PNG fake image bytes")}
	writePlist(t, filepath.Join(b.dir, "Manifest.plist"), map[string]any{
		"IsEncrypted": false, "Version": "10.0", "Date": time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), // literal date: a plist value read back
		"Lockdown": map[string]any{"DeviceName": "Test iPhone", "ProductVersion": "11.2"},
	})
	writePlist(t, filepath.Join(b.dir, "Status.plist"), map[string]any{"SnapshotState": "finished", "IsFullBackup": true})

	// sms.db
	sms := newFixture(t, "iOS11.2")
	s := populate(sms)
	b.attRowID = s.attJPEG
	b.attRowID2 = sms.insert("attachment", "guid", "at_abs", "filename", "/var/mobile/Library/SMS/Attachments/cd/02/IMG_2.jpg",
		"transfer_name", "IMG_2.jpg", "original_guid", "at_abs")
	mustExec(t, sms, "UPDATE attachment SET filename = '~/Library/SMS/Attachments/ab/11/IMG_0042.jpeg' WHERE ROWID = ?", s.attJPEG)
	sms.db.Close()
	place(t, b.dir, smsFileID, mustRead(t, sms.path))
	// The attachment file, under MediaDomain's hash.
	place(t, b.dir, FileID(mediaDomain, "Library/SMS/Attachments/ab/11/IMG_0042.jpeg"), b.attBytes)
	// The address book, registered in Manifest.db under a non-default id
	// so the test proves Manifest.db is asked first.
	const abID = "00112233445566778899aabbccddeeff00112233"
	place(t, b.dir, abID, []byte("SQLite format 3\x00 address book stand-in"))

	b.manifest = &fixture{t: t, path: filepath.Join(b.dir, "Manifest.db"), cols: map[string]map[string]bool{
		"Files": {"fileID": true, "domain": true, "relativePath": true, "flags": true, "file": true}}}
	b.manifest.db = createFromSchema(t, b.manifest.path, "manifestdb_11.2")
	b.manifest.insert("Files", "fileID", smsFileID, "domain", homeDomain, "relativePath", smsPath, "flags", 1)
	b.manifest.insert("Files", "fileID", abID, "domain", homeDomain, "relativePath", addressBookDB, "flags", 1)
	// A hostile fileID must never become a path.
	b.manifest.insert("Files", "fileID", "../../../../etc/passwd", "domain", homeDomain, "relativePath", "Library/evil", "flags", 1)
	b.manifest.insert("Files", "fileID", FileID(mediaDomain, "Library/SMS/Attachments/ab/11/IMG_0042.jpeg"),
		"domain", mediaDomain, "relativePath", "Library/SMS/Attachments/ab/11/IMG_0042.jpeg", "flags", 1)
	b.manifest.db.Close()
	return b
}

func writePlist(t *testing.T, path string, v any) {
	t.Helper()
	data, err := plist.Marshal(v, plist.XMLFormat)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func place(t *testing.T, dir, id string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, id[:2], id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBackupReadsMessagesAndAttachmentsWithoutChangingIt: OpenBackup finds
// sms.db and the AddressBook through Manifest.db and reads the device's
// name, version and backup date; a file outside its domain is not found;
// messages and attachments read back (an absolute /var/mobile path maps to
// its hashed file); CheckBackup passes; and no file in the backup changes.
func TestBackupReadsMessagesAndAttachmentsWithoutChangingIt(t *testing.T) {
	ctx := context.Background()
	sb := newSynthBackup(t)
	before := dirDigestRecursive(t, sb.dir)
	b, err := OpenBackup(ctx, sb.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if want := filepath.Join(sb.dir, "3d", smsFileID); b.SMSDB != want {
		t.Errorf("SMSDB = %s, want %s", b.SMSDB, want)
	}
	if want := filepath.Join(sb.dir, "00", "00112233445566778899aabbccddeeff00112233"); b.AddressBook != want {
		t.Errorf("AddressBook = %s, want %s (from Manifest.db)", b.AddressBook, want)
	}
	if b.AddressBookImages != "" {
		t.Errorf("AddressBookImages = %q, want empty", b.AddressBookImages)
	}
	if b.DeviceName != "Test iPhone" || b.ProductVersion != "11.2" || !b.Date.Equal(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)) { // literal date: a plist value read back
		t.Errorf("device info = %q %q %v", b.DeviceName, b.ProductVersion, b.Date)
	}
	if _, err := b.File(ctx, homeDomain, "Library/evil"); !errors.Is(err, ErrNotFound) {
		t.Errorf("hostile fileID: %v", err)
	}

	r, err := b.OpenMessages(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, _ := readAll(t, r)
	if m := got["M-PLAIN"]; m.Text != "Are we still on for Thursday?" || !m.Time.Equal(at(0)) {
		t.Errorf("M-PLAIN from the backup = %+v", m)
	}
	if n := len(got["M-ATTACH"].Attachments); n != 2 {
		t.Errorf("attachments in backup: %d", n)
	}
	a, err := r.Attachment(ctx, sb.attRowID)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(a.Path); err != nil || !bytes.Equal(data, sb.attBytes) {
		t.Errorf("attachment at %s: %q, %v", a.Path, data, err)
	}
	// An absolute /var/mobile path maps to the same domain; the file is not
	// in the backup, so the path is the hashed name that does not exist.
	a2, err := r.Attachment(ctx, sb.attRowID2)
	if err != nil {
		t.Fatal(err)
	}
	id := FileID(mediaDomain, "Library/SMS/Attachments/cd/02/IMG_2.jpg")
	if a2.Path != filepath.Join(sb.dir, id[:2], id) {
		t.Errorf("absolute attachment path = %s", a2.Path)
	}
	if a2.Filename != "IMG_2.jpg" {
		t.Errorf("filename %q", a2.Filename)
	}
	r.Close()
	b.Close()
	if after := dirDigestRecursive(t, sb.dir); after != before {
		t.Error("reading the backup changed files in it")
	}
	checks := CheckBackup(ctx, sb.dir)
	for _, c := range checks {
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Detail)
		}
	}
}

func dirDigestRecursive(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s:%x\n", p, sha256.Sum256(data))
		}
		return nil
	})
	return b.String()
}

func TestBackupErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		mutate  func(t *testing.T, dir string)
		want    error
		mention string
	}{
		{"encrypted", func(t *testing.T, dir string) {
			writePlist(t, filepath.Join(dir, "Manifest.plist"), map[string]any{"IsEncrypted": true})
		}, ErrEncryptedBackup, "IsEncrypted"},
		{"interrupted", func(t *testing.T, dir string) {
			writePlist(t, filepath.Join(dir, "Status.plist"), map[string]any{"SnapshotState": "uploading"})
		}, ErrIncompleteBackup, "uploading"},
		{"no manifest db", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "Manifest.db"))
		}, ErrIncompleteBackup, "Manifest.db"},
		{"manifest db encrypted", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "Manifest.plist"))
			os.WriteFile(filepath.Join(dir, "Manifest.db"), bytes.Repeat([]byte{0xA5}, 4096), 0o600)
		}, ErrEncryptedBackup, "not a SQLite database"},
		{"no sms.db", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "3d", smsFileID))
		}, ErrIncompleteBackup, "sms.db"},
		{"not a backup", func(t *testing.T, dir string) {
			for _, n := range []string{"Manifest.db", "Manifest.plist", "Status.plist"} {
				os.Remove(filepath.Join(dir, n))
			}
		}, ErrIncompleteBackup, "is this a backup folder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := newSynthBackup(t)
			c.mutate(t, sb.dir)
			b, err := OpenBackup(ctx, sb.dir)
			if err == nil {
				b.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("err = %v; want %v mentioning %q", err, c.want, c.mention)
			}
			checks := CheckBackup(ctx, sb.dir)
			if len(checks) != 1 || checks[0].OK || checks[0].Fix == "" {
				t.Errorf("CheckBackup = %+v", checks)
			}
		})
	}
	if _, err := OpenBackup(ctx, filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
}

// TestOldBackupLayout: iOS 9 and older backups have Manifest.mbdb and keep
// files flat in the folder; files are found by hash.
func TestOldBackupLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sms := newFixture(t, "iOS9.2.1")
	populate(sms)
	sms.db.Close()
	os.WriteFile(filepath.Join(dir, smsFileID), mustRead(t, sms.path), 0o600)
	os.WriteFile(filepath.Join(dir, "Manifest.mbdb"), []byte("mbdb\x05\x00"), 0o600)
	b, err := OpenBackup(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := b.OpenMessages(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	if err := r.Messages(ctx, 0, func(model.Message) error { n++; return nil }); err != nil || n == 0 {
		t.Errorf("read %d messages: %v", n, err)
	}
}
