package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidings-mcp/tidings/internal/imageview"
	"github.com/tidings-mcp/tidings/internal/output"
)

// ViewParams are get_attachment's arguments.
type ViewParams struct {
	AttachmentID string
	// Size is "preview", "large" or "full" ("" = DefaultViewSize).
	Size string
}

// DefaultViewSize is get_attachment's size when none is given: the size
// vision models read at without scaling again.
const DefaultViewSize = imageview.Large

// ViewedImage is an image attachment rendered for a model to look at
// (docs/tools.md, get_attachment): re-encoded from its pixels, upright,
// within the size's pixel and byte budget, with no metadata. Data travels
// as base64 in JSON (the bridge); the MCP tool sends it as image content.
type ViewedImage struct {
	ID       string `json:"id"`
	Filename string `json:"filename,omitempty"`
	// MimeType is the returned picture's type: image/jpeg or image/png.
	MimeType string `json:"mime_type"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Bytes    int    `json:"bytes"`
	Size     string `json:"size"`
	// SourceFormat and SourceWidth×SourceHeight describe the attachment's
	// own file (pixels as stored, before turning it upright).
	SourceFormat string `json:"source_format"`
	SourceWidth  int    `json:"source_width"`
	SourceHeight int    `json:"source_height"`
	Note         string `json:"note,omitempty"`
	Data         []byte `json:"data"`
}

// viewSlots bounds how many pictures are decoded at once: a decode holds
// the whole picture (up to MaxAttachmentPixels × 4 bytes) in memory.
var viewSlots = make(chan struct{}, 2)

// ViewAttachment renders an image attachment at a size. It finds the
// attachment exactly as save_attachment does (read policy on its own
// conversation, blocked authors, files only inside the Messages folders,
// never through a link), and answers in one sentence when the attachment
// is not an image, is an image of a format that cannot be decoded, is
// still in iCloud, or declares more than MaxAttachmentPixels pixels (read
// from its header, before any pixel is decoded).
func (s *Service) ViewAttachment(ctx context.Context, prm ViewParams) (ViewedImage, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return ViewedImage{}, err
	}
	id := strings.TrimSpace(prm.AttachmentID)
	if id == "" {
		return ViewedImage{}, userErr("attachment_id is required: take it from a message's attachments in get_conversation_messages or search_messages")
	}
	size := imageview.Size(strings.ToLower(strings.TrimSpace(prm.Size)))
	if size == "" {
		size = DefaultViewSize
	}
	if _, ok := imageview.Budgets[size]; !ok {
		return ViewedImage{}, userErr("size must be preview, large or full (got %q)", output.Name(prm.Size))
	}
	loc, src, err := s.locateAttachment(ctx, p, id)
	if err != nil {
		return ViewedImage{}, err
	}
	mime, filename := strings.ToLower(strings.TrimSpace(loc.MimeType)), loc.Filename
	name := ""
	if filename != "" {
		name = " (" + output.Filename(filename) + ")"
	}
	if mime != "" && !strings.HasPrefix(mime, "image/") {
		return ViewedImage{}, userErr("attachment %s%s is %s, not an image, so it cannot be shown; get_attachment shows images only", output.Name(id), name, describeType(mime))
	}
	data, err := readAttachment(id, filename, src, MaxAttachmentBytes)
	if err != nil {
		return ViewedImage{}, err
	}
	select {
	case viewSlots <- struct{}{}:
		defer func() { <-viewSlots }()
	case <-ctx.Done():
		return ViewedImage{}, ctx.Err()
	}
	res, err := imageview.Render(data, imageview.Options{Size: size, MaxPixels: MaxAttachmentPixels})
	if err != nil {
		return ViewedImage{}, viewError(id, name, data, err)
	}
	out := ViewedImage{ID: output.Name(id), Filename: output.Filename(filename), MimeType: res.MimeType, Width: res.Width, Height: res.Height,
		Bytes: len(res.Data), Size: string(size), SourceFormat: res.Source, SourceWidth: res.SourceWidth, SourceHeight: res.SourceHeight, Data: res.Data}
	var notes []string
	if res.Orientation > 1 {
		notes = append(notes, "turned upright by its EXIF orientation")
	}
	if long := max(res.SourceWidth, res.SourceHeight); long > max(res.Width, res.Height) {
		notes = append(notes, fmt.Sprintf("scaled down from %d×%d", res.SourceWidth, res.SourceHeight))
	}
	if size != imageview.Full && max(res.SourceWidth, res.SourceHeight) > max(res.Width, res.Height) {
		notes = append(notes, "ask for a larger size to see more detail")
	}
	notes = append(notes, "metadata (location, camera, dates) removed")
	out.Note = strings.Join(notes, "; ")
	return out, nil
}

// viewError turns Render's errors into one sentence naming the format.
func viewError(id, name string, data []byte, err error) error {
	var fe *imageview.FormatError
	if !errors.As(err, &fe) {
		return fmt.Errorf("render attachment %s: %w", output.Name(id), err)
	}
	format := strings.ToUpper(fe.Format)
	switch {
	case errors.Is(err, imageview.ErrTooLarge):
		return userErr("attachment %s%s declares %d×%d pixels; pictures above %d pixels are not decoded", output.Name(id), name, fe.Width, fe.Height, MaxAttachmentPixels)
	case fe.Format == "":
		return userErr("attachment %s%s is not in an image format Tidings can show (JPEG, PNG, GIF, HEIC, TIFF, WebP, BMP)", output.Name(id), name)
	case errors.Is(err, imageview.ErrUnknownFormat):
		msg := fmt.Sprintf("attachment %s%s is a %s image, which this build of Tidings cannot decode", output.Name(id), name, format)
		if _, _, _, _, cerr := checkImage(id, data); cerr == nil {
			msg += "; save_attachment can copy it to a file"
		}
		return userErr("%s", msg)
	default:
		return userErr("attachment %s%s does not decode as a %s image (the file may be damaged or incomplete)", output.Name(id), name, format)
	}
}

// describeType names a MIME type for a person: "a PDF document
// (application/pdf)".
func describeType(mime string) string {
	kind := map[string]string{"video": "a video", "audio": "an audio recording", "text": "a text file"}[strings.SplitN(mime, "/", 2)[0]]
	switch mime {
	case "application/pdf":
		kind = "a PDF document"
	case "text/vcard":
		kind = "a contact card"
	case "text/x-vlocation":
		kind = "a shared location"
	}
	if kind == "" {
		kind = "a file"
	}
	return kind + " (" + output.Name(mime) + ")"
}
