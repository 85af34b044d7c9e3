package mcpserver

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/imageview"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// shown is one get_attachment answer: the image content block decoded,
// and the structured description.
type shown struct {
	raw  []byte
	mime string
	img  image.Image
	out  GetAttachmentOutput
}

// showAttachment calls get_attachment and fails the test unless the answer
// is one image content block (plus its JSON text) whose picture matches
// the description.
func showAttachment(t *testing.T, cs *mcp.ClientSession, id, size string) shown {
	t.Helper()
	args := map[string]any{"attachment_id": id}
	if size != "" {
		args["size"] = size
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_attachment", Arguments: args})
	if err != nil {
		t.Fatalf("get_attachment(%v): %v", args, err)
	}
	if res.IsError {
		t.Fatalf("get_attachment(%v): isError %v", args, res.Content)
	}
	var s shown
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			if s.raw != nil {
				t.Fatal("two image blocks")
			}
			s.raw, s.mime = ic.Data, ic.MIMEType
		}
	}
	if s.raw == nil {
		t.Fatalf("get_attachment(%v): no image content in %v", args, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &s.out); err != nil {
		t.Fatal(err)
	}
	img, format, err := image.Decode(bytes.NewReader(s.raw))
	if err != nil {
		t.Fatalf("image content does not decode: %v", err)
	}
	s.img = img
	if "image/"+format != s.mime || s.mime != s.out.MimeType || img.Bounds().Dx() != s.out.Width || img.Bounds().Dy() != s.out.Height || len(s.raw) != s.out.Bytes {
		t.Fatalf("image content (%s, %v, %d bytes) does not match its description %+v", s.mime, img.Bounds(), len(s.raw), s.out)
	}
	return s
}

func red(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 > 170 && g>>8 < 100 && b>>8 < 100
}

// hikePhotos returns the attachment ids of the demo's hike story by file
// name, and checks that history marks them viewable.
func hikePhotos(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	ids := map[string]string{}
	r := ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Emma", "limit": 50}, nil)
	var page struct {
		Messages []struct {
			Attachments []struct {
				ID       string `json:"id"`
				Filename string `json:"filename"`
				Viewable bool   `json:"viewable"`
			} `json:"attachments"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.raw, &page); err != nil {
		t.Fatal(err)
	}
	for _, m := range page.Messages {
		for _, a := range m.Attachments {
			ids[a.Filename] = a.ID
			if !a.Viewable {
				t.Errorf("%s is not marked viewable", a.Filename)
			}
		}
	}
	for _, name := range []string{"IMG_5120.HEIC", "IMG_5133.JPG", "IMG_4870.jpeg"} {
		if ids[name] == "" {
			t.Fatalf("demo photo %s not in Emma's history (%v)", name, ids)
		}
	}
	return ids
}

// TestGetAttachmentShowsDemoPhotos drives get_attachment through a real
// MCP client on the demo data set: every size within its pixel and byte
// budget, the iPhone's HEIC decoded, a sideways portrait turned upright by
// its EXIF orientation, its GPS position gone, a photo still in iCloud
// said so, and search hits marking their photos viewable.
func TestGetAttachmentShowsDemoPhotos(t *testing.T) {
	env := servicetest.Demo(t, 0, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	ids := hikePhotos(t, cs)

	t.Run("each size within its budget", func(t *testing.T) {
		for _, name := range []string{"IMG_5120.HEIC", "IMG_5133.JPG"} {
			for _, size := range []string{"preview", "large", "full", ""} {
				s := showAttachment(t, cs, ids[name], size)
				want := size
				if want == "" {
					want = "large"
				}
				b := imageview.Budgets[imageview.Size(want)]
				if s.out.Size != want || len(s.raw) > b.Bytes || (b.LongSide > 0 && max(s.out.Width, s.out.Height) > b.LongSide) {
					t.Errorf("%s at %q: %+v, budget %+v", name, size, s.out, b)
				}
			}
		}
	})

	t.Run("HEIC decodes", func(t *testing.T) {
		s := showAttachment(t, cs, ids["IMG_5120.HEIC"], "large")
		if s.out.SourceFormat != "heic" || s.out.Width != 480 || s.out.Height != 360 || s.mime != "image/jpeg" {
			t.Fatalf("heic shown as %+v", s.out)
		}
		if !red(s.img.At(25, 25)) || red(s.img.At(455, 25)) {
			t.Errorf("heic pixels: top-left %v, top-right %v", s.img.At(25, 25), s.img.At(455, 25))
		}
		// preview scales it into 400 px.
		if p := showAttachment(t, cs, ids["IMG_5120.HEIC"], "preview"); p.out.Width != 400 || p.out.Height != 300 {
			t.Errorf("heic preview %d×%d, want 400×300", p.out.Width, p.out.Height)
		}
	})

	t.Run("EXIF orientation 6 turns the portrait upright", func(t *testing.T) {
		s := showAttachment(t, cs, ids["IMG_5133.JPG"], "full")
		if s.out.SourceWidth != 240 || s.out.SourceHeight != 180 || s.out.Width != 180 || s.out.Height != 240 {
			t.Fatalf("portrait: stored %d×%d shown %d×%d, want 240×180 shown 180×240", s.out.SourceWidth, s.out.SourceHeight, s.out.Width, s.out.Height)
		}
		m := demo.PortraitMarker / 2
		if !red(s.img.At(180-1-m, m)) || red(s.img.At(m, m)) {
			t.Errorf("the stored top-left marker is not at the upright top-right: top-right %v, top-left %v", s.img.At(180-1-m, m), s.img.At(m, m))
		}
		if !strings.Contains(s.out.Note, "upright") {
			t.Errorf("note %q does not say it was turned", s.out.Note)
		}
	})

	t.Run("GPS is stripped", func(t *testing.T) {
		orig, err := os.ReadFile(demoFile(t, env, "IMG_5133.JPG"))
		if err != nil || !bytes.Contains(orig, []byte("Exif\x00\x00")) {
			t.Fatalf("the demo portrait has no Exif to strip: %v", err)
		}
		for _, size := range []string{"preview", "large", "full"} {
			s := showAttachment(t, cs, ids["IMG_5133.JPG"], size)
			for _, seg := range jpegMarkers(t, s.raw) {
				if seg == 0xE1 {
					t.Errorf("%s: the picture still has an APP1 (Exif/GPS) segment", size)
				}
			}
		}
	})

	t.Run("a photo still in iCloud says so", func(t *testing.T) {
		failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": ids["IMG_4870.jpeg"]}, "IMG_4870.jpeg", "iCloud")
	})

	t.Run("search hits say which attachments can be shown", func(t *testing.T) {
		r := ok(t, cs, "search_messages", map[string]any{"query": "top of Mount Tam", "mode": "fulltext"}, nil)
		var res struct {
			Hits []struct {
				Attachments []struct {
					ID       string `json:"id"`
					Viewable bool   `json:"viewable"`
				} `json:"attachments"`
			} `json:"hits"`
		}
		json.Unmarshal(r.raw, &res)
		found := false
		for _, h := range res.Hits {
			for _, a := range h.Attachments {
				if a.ID == ids["IMG_5120.HEIC"] && a.Viewable {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the summit photo is not a viewable attachment of a hit: %s", clipTest(string(r.raw)))
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": ""}, "attachment_id is required")
		failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": "999999"}, "was not found")
	})
}

// demoFile finds a demo attachment file by name.
func demoFile(t *testing.T, env *servicetest.Env, name string) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(env.Dir, "Attachments"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no demo file %s", name)
	}
	return found
}

// jpegMarkers lists a JPEG's segment markers up to the scan.
func jpegMarkers(t *testing.T, b []byte) []byte {
	t.Helper()
	var out []byte
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			t.Fatalf("not a JPEG marker at %d", i)
		}
		out = append(out, b[i+1])
		if b[i+1] == 0xDA {
			break
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
	return out
}

// TestGetAttachmentRefusesFilesOutsideTheMessagesFolders: a demo photo
// whose file was replaced by a symbolic link, and one whose stored path
// climbs out of the Messages folder with "..", are refused with a
// sentence; neither is read.
func TestGetAttachmentRefusesFilesOutsideTheMessagesFolders(t *testing.T) {
	env := servicetest.Demo(t, 0, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	ids := hikePhotos(t, cs)

	// A symlink where the HEIC was, pointing at a picture elsewhere.
	heic := demoFile(t, env, "IMG_5120.HEIC")
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.jpeg")
	portrait, err := os.ReadFile(demoFile(t, env, "IMG_5133.JPG"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(elsewhere, portrait, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(heic)
	if err := os.Symlink(elsewhere, heic); err != nil {
		t.Fatal(err)
	}
	failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": ids["IMG_5120.HEIC"]}, "symbolic link")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": ids["IMG_5120.HEIC"], "destination": filepath.Join(env.Files, "x.jpeg")}, "symbolic link")

	// The portrait's row now names a file two levels above the folder.
	db, err := sql.Open("sqlite", env.ChatDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE attachment SET filename = '~/Library/Messages/Attachments/../../outside.jpeg' WHERE ROWID = ?`, ids["IMG_5133.JPG"]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(env.Dir), "outside.jpeg"), portrait, 0o600); err != nil {
		t.Fatal(err)
	}
	failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": ids["IMG_5133.JPG"]}, "outside the Messages folders")
}

// TestBlockedPhotoIsRefusedByGetAttachmentAsBySaveAttachment: the photo a
// blocked person sent to a group the policy allows, by row id and by
// guid, gets exactly save_attachment's "not found" sentence from
// get_attachment — the answer does not tell a blocked photo from a
// missing one.
func TestBlockedPhotoIsRefusedByGetAttachmentAsBySaveAttachment(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	for _, id := range []string{"5", "fx-att-5"} {
		save := failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": id, "destination": filepath.Join(env.Files, "x.png")}, "was not found")
		for _, size := range []string{"preview", "full"} {
			if show := failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": id, "size": size}, "was not found"); show != save {
				t.Errorf("attachment %s: get_attachment says %q, save_attachment %q", id, show, save)
			}
		}
	}
	// A non-image names what it is.
	failsWith(t, cs, "get_attachment", map[string]any{"attachment_id": "2"}, "lease.pdf", "a PDF document", "not an image")
}

// TestGetAttachmentListEntryFitsItsBudget: get_attachment's tools/list
// entry (name, description, both schemas, annotations) stays within 1.5 KB,
// the budget its issue set, so every client pays little for offering it.
// The entry is read from its snapshot, which TestToolSnapshots holds equal
// to the wire definition.
func TestGetAttachmentListEntryFitsItsBudget(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "toolsnaps", "get_attachment.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatal(err)
	}
	if compact.Len() > 1500 {
		t.Errorf("get_attachment's tools/list entry is %d bytes, budget 1500", compact.Len())
	}
}
