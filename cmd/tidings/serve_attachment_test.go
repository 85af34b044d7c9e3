package main

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
	_ "modernc.org/sqlite"
)

// addBigAttachment adds to the fixture's chat.db an incoming message in
// Alex's thread with a "PNG" of size bytes (a sparse file), returning its
// attachment id.
func addBigAttachment(t *testing.T, chatDB string, size int64) string {
	t.Helper()
	dir := filepath.Dir(chatDB)
	f, err := os.Create(filepath.Join(dir, "Attachments", "a5-huge.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := chatdb.ForTest(t, db)
	w.Message(chatdb.Message{ROWID: 900, GUID: "fx-huge", Text: "\ufffc", Handle: 1, Service: "iMessage",
		Date: chatdb.Nanos(servicetest.Now.Add(-90 * time.Minute)), Read: true, Finished: true, HasAttachments: true, PartCount: 1,
		Chats: []int64{1}})
	w.Attachment(chatdb.Attachment{ROWID: 5, GUID: "fx-att-5", Filename: "~/Library/Messages/Attachments/a5-huge.png", UTI: "public.png",
		MIME: "image/png", TransferState: 5, TransferName: "huge.png", TotalBytes: size, Messages: []int64{900}})
	return "5"
}

// TestSaveAttachmentBridgeParity runs save_attachment in-process and
// through `serve --bridge` (the helper reads and checks the image, this
// side writes it into its own file_dirs) with the same profile folder and
// requires identical tool results and identical files, for a real image,
// non-images, a blocked thread's attachment, unknown ids, destinations
// outside the folders and existing files. Over the bridge, images above
// 32 MiB are refused (the response-size cap), and the helper never learns
// the destination.
func TestSaveAttachmentBridgeParity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a helper and two servers")
	}
	dataDir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dataDir)
	big := addBigAttachment(t, chatDB, bridge.MaxBridgeAttachmentBytes+1)
	now := servicetest.Now.Format(time.RFC3339)

	files := filepath.Join(t.TempDir(), "saved")
	outside := t.TempDir()
	os.MkdirAll(files, 0o700)
	profile := filepath.Join(t.TempDir(), "profile.toml")
	os.WriteFile(profile, []byte("file_dirs = [\""+files+"\"]\n"), 0o600)

	home := filepath.Join(t.TempDir(), "home")
	servicetest.WritePolicy(t, home, "", []string{servicetest.BlockedPhone}, nil)
	local := startClient(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_NOW": now},
		"--imessage", chatDB, "--contacts", vcf, "--profile", profile)

	bdir := filepath.Join(t.TempDir(), "bridge")
	if err := bridge.PrepareFolder(bdir); err != nil {
		t.Fatal(err)
	}
	servicetest.WritePolicy(t, bdir, "", []string{servicetest.BlockedPhone}, nil)
	startHelper(t, map[string]string{"TIDINGS_HOME": filepath.Join(t.TempDir(), "helperhome"), "TIDINGS_NOW": now, "DISPLAY": ""},
		"--bridge-dir", bdir, "--imessage", chatDB, "--contacts", vcf)
	remote := startClient(t, map[string]string{"TIDINGS_HOME": filepath.Join(t.TempDir(), "servehome"), "TIDINGS_NOW": now},
		"--bridge", bdir, "--profile", profile)

	// The attachment ids, as a model would find them.
	hist := local.waitFor("get_conversation_messages", map[string]any{"chat": servicetest.HostilePhone, "limit": 50}, func(r callResult) bool {
		return !r.IsErr
	}).Out
	ids := map[string]string{}
	for _, m := range hist["messages"].([]any) {
		for _, a := range func() []any { as, _ := m.(map[string]any)["attachments"].([]any); return as }() {
			am := a.(map[string]any)
			ids[am["mime_type"].(string)+" "+am["filename"].(string)] = am["id"].(string)
		}
	}
	photo, pdf, fake := ids["image/png climbgnp.exe.png"], ids["application/pdf lease.pdf"], ids["image/png notreally.png"]
	if photo == "" || pdf == "" || fake == "" {
		t.Fatalf("attachment ids %v", ids)
	}
	src, _ := os.ReadFile(filepath.Join(dataDir, "Attachments", "a1-climbgnp.exe.png"))

	type fileState struct {
		data []byte
		mode os.FileMode
		ok   bool
	}
	stat := func(p string) fileState {
		fi, err := os.Lstat(p)
		if err != nil {
			return fileState{}
		}
		b, _ := os.ReadFile(p)
		return fileState{data: b, mode: fi.Mode(), ok: true}
	}
	cases := []struct {
		name     string
		args     map[string]any
		existing bool // the destination exists before the call
		wantErr  string
		wantFile bool
	}{
		{"photo", map[string]any{"attachment_id": photo, "destination": filepath.Join(files, "climb.png")}, false, "", true},
		{"pdf", map[string]any{"attachment_id": pdf, "destination": filepath.Join(files, "lease.pdf")}, false, "not an image", false},
		{"fake png", map[string]any{"attachment_id": fake, "destination": filepath.Join(files, "fake.png")}, false, "is not a PNG", false},
		{"blocked guid", map[string]any{"attachment_id": "fx-att-4", "destination": filepath.Join(files, "b.png")}, false, "was not found", false},
		{"blocked row id", map[string]any{"attachment_id": "4", "destination": filepath.Join(files, "b.png")}, false, "was not found", false},
		{"unknown", map[string]any{"attachment_id": "999", "destination": filepath.Join(files, "u.png")}, false, "was not found", false},
		{"no id", map[string]any{"attachment_id": " ", "destination": filepath.Join(files, "n.png")}, false, "attachment_id is required", false},
		{"outside", map[string]any{"attachment_id": photo, "destination": filepath.Join(outside, "x.png")}, false, "outside the folders", false},
		{"relative", map[string]any{"attachment_id": photo, "destination": "x.png"}, false, "absolute", false},
		{"traversal", map[string]any{"attachment_id": photo, "destination": files + "/../" + filepath.Base(outside) + "/x.png"}, false, "", false},
		{"exists", map[string]any{"attachment_id": photo, "destination": filepath.Join(files, "old.png")}, true, "already exists", false},
		{"overwrite", map[string]any{"attachment_id": photo, "destination": filepath.Join(files, "old.png"), "overwrite": true}, true, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dest, _ := tc.args["destination"].(string)
			var got [2]callResult
			var state [2]fileState
			for i, c := range []*mcpClient{local, remote} {
				os.Remove(dest)
				if tc.existing {
					os.WriteFile(dest, []byte("old content"), 0o644)
				}
				got[i] = c.call("save_attachment", tc.args)
				state[i] = stat(dest)
			}
			os.Remove(dest)
			if got[0].IsErr != got[1].IsErr || got[0].Text != got[1].Text || !bytes.Equal(got[0].Raw, got[1].Raw) {
				t.Errorf("differ:\n in-process %v %s\n bridge     %v %s", got[0].IsErr, got[0].Text, got[1].IsErr, got[1].Text)
			}
			if state[0].ok != state[1].ok || !bytes.Equal(state[0].data, state[1].data) || state[0].mode != state[1].mode {
				t.Errorf("files differ: %v %o vs %v %o", state[0].ok, state[0].mode, state[1].ok, state[1].mode)
			}
			if tc.wantErr != "" && (!got[0].IsErr || !strings.Contains(got[0].Text, tc.wantErr)) {
				t.Errorf("want an error with %q, got %v %s", tc.wantErr, got[0].IsErr, got[0].Text)
			}
			if tc.name == "traversal" && !got[0].IsErr {
				t.Errorf("a destination escaping file_dirs through .. was written: %s", got[0].Text)
			}
			if tc.wantFile {
				if !state[1].ok || !bytes.Equal(state[1].data, src) || state[1].mode.Perm() != 0o600 || got[1].Out["format"] != "png" {
					t.Errorf("saved file: %v mode %o, result %s", state[1].ok, state[1].mode, got[1].Raw)
				}
				if tc.existing != (got[1].Out["overwrote"] == true) {
					t.Errorf("overwrote = %v", got[1].Out["overwrote"])
				}
			} else if tc.existing {
				if string(state[1].data) != "old content" {
					t.Errorf("an existing file was replaced without overwrite")
				}
			} else if state[0].ok || state[1].ok {
				t.Errorf("a file was written: %v %v", state[0].ok, state[1].ok)
			}
		})
	}

	// get_attachment over the bridge (1.3 action get_attachment: the helper
	// decodes and re-encodes) answers byte for byte as in-process: the
	// picture, its description, and every refusal sentence, a blocked
	// thread's photo included.
	for _, args := range []map[string]any{
		{"attachment_id": photo}, {"attachment_id": photo, "size": "preview"}, {"attachment_id": photo, "size": "full"},
		{"attachment_id": pdf}, {"attachment_id": fake}, {"attachment_id": "4"}, {"attachment_id": "fx-att-4", "size": "full"},
		{"attachment_id": "999"}, {"attachment_id": photo, "size": "huge"},
	} {
		in, over := local.call("get_attachment", args), remote.call("get_attachment", args)
		if in.IsErr != over.IsErr || in.Text != over.Text || !bytes.Equal(in.Raw, over.Raw) || !bytes.Equal(in.Image, over.Image) {
			t.Errorf("get_attachment(%v) differs:\n in-process %v %s %s\n bridge     %v %s %s", args, in.IsErr, in.Text, in.Raw, over.IsErr, over.Text, over.Raw)
		}
		if !in.IsErr && len(in.Image) == 0 {
			t.Errorf("get_attachment(%v): no image", args)
		}
	}
	if r := remote.call("get_attachment", map[string]any{"attachment_id": "4"}); !r.IsErr || !strings.Contains(r.Text, "was not found") {
		t.Errorf("a blocked thread's photo over the bridge: %v %s", r.IsErr, r.Text)
	}
	if _, err := bridgeCall(t, bdir, bridge.ExtViewAttachment, `{"AttachmentID": "`+photo+`"}`, "--protocol", "1.2"); err == nil {
		t.Error("a 1.2 client got get_attachment")
	}

	// Above the bridge's cap: refused over the bridge before any byte is
	// sent; in-process the file is read and refused as not an image.
	bigArgs := map[string]any{"attachment_id": big, "destination": filepath.Join(files, "huge.png")}
	if r := remote.call("save_attachment", bigArgs); !r.IsErr || !strings.Contains(r.Text, "files above 33554432 bytes are not saved") {
		t.Errorf("over the bridge cap: %v %s", r.IsErr, r.Text)
	}
	if r := local.call("save_attachment", bigArgs); !r.IsErr || !strings.Contains(r.Text, "is not a PNG") {
		t.Errorf("in-process, 32 MiB + 1 of zeros: %v %s", r.IsErr, r.Text)
	}
	// A hostile 1.3 client cannot raise the cap.
	if got, err := bridgeCall(t, bdir, bridge.ExtAttachmentImage, `{"AttachmentID": "`+big+`", "MaxBytes": 1099511627776}`, "--protocol", "1.3"); err == nil ||
		!strings.Contains(got["error"].(string), "files above 33554432 bytes") {
		t.Errorf("get_attachment_image with a huge MaxBytes: %v %v", got, err)
	}
	// get_attachment_image is host-only content: a 1.2 client does not see it.
	if _, err := bridgeCall(t, bdir, bridge.ExtAttachmentImage, `{"AttachmentID": "`+photo+`"}`, "--protocol", "1.2"); err == nil {
		t.Error("a 1.2 client got get_attachment_image")
	}
	// The helper never learned where files go.
	logData, err := os.ReadFile(filepath.Join(bdir, "control", "log.txt"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if strings.Contains(string(logData), files) || strings.Contains(string(logData), "climb.png") {
		t.Errorf("the helper's log names a destination:\n%s", logData)
	}
}
