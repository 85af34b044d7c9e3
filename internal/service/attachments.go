package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF for the decode check
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// Attachment limits: Messages refuses attachments above about 100 MB; the
// pixel cap bounds the memory a decode check takes.
const (
	MaxAttachmentBytes  = 100 << 20
	MaxAttachmentPixels = 80_000_000
)

// SaveParams are save_attachment's arguments.
type SaveParams struct {
	AttachmentID string
	// Destination is the exact file path to write, absolute, inside one of
	// AllowedDirs (after resolving symlinks); its folder must exist.
	Destination string
	// Overwrite allows replacing an existing file.
	Overwrite bool
	// AllowedDirs are the folders files may be written into (the profile's
	// file_dirs). Empty refuses every write.
	AllowedDirs []string
}

// Saved is save_attachment's result. It names the file written and the
// attachment, never the attachment's own location on disk.
type Saved struct {
	Destination string `json:"destination"`
	Bytes       int64  `json:"bytes"`
	MimeType    string `json:"mime_type"`
	Filename    string `json:"filename,omitempty"`
	Format      string `json:"format"`
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
	Overwrote   bool   `json:"overwrote"`
	Note        string `json:"note,omitempty"`
}

// heifBrands are ISO BMFF major brands of HEIF/HEIC stills.
var heifBrands = map[string]bool{"heic": true, "heix": true, "heim": true, "heis": true, "hevc": true, "hevx": true, "mif1": true, "msf1": true, "avif": true}

// SaveAttachment copies an image attachment to Destination. It refuses a
// destination outside AllowedDirs (symlinks of the destination's folder and
// of the allowed folders are resolved before the check, and the
// destination itself must not be a symlink), a missing folder, an existing
// file unless Overwrite, and any attachment that is not an image (by MIME
// type and by a decode check of its bytes). The file is written to a
// temporary name in the same folder, synced, made 0600 and then moved into
// place, so a reader never sees half a file.
func (s *Service) SaveAttachment(ctx context.Context, prm SaveParams) (Saved, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return Saved{}, err
	}
	if err := CheckSave(prm); err != nil {
		return Saved{}, err
	}
	img, err := s.attachmentImage(ctx, p, strings.TrimSpace(prm.AttachmentID), MaxAttachmentBytes)
	if err != nil {
		return Saved{}, err
	}
	return WriteAttachment(prm, img)
}

// AttachmentParams are AttachmentImage's arguments.
type AttachmentParams struct {
	AttachmentID string
	// MaxBytes bounds the file; 0 or more than MaxAttachmentBytes means
	// MaxAttachmentBytes. A larger file is refused with a sentence.
	MaxBytes int64
}

// AttachmentImage is an image attachment's content, checked: it belongs to
// a thread the read policy allows (the index answers only for visible
// threads), it is an image by MIME type, and its bytes decode as PNG, JPEG
// or GIF (or carry a HEIC signature). It never says where the file is.
// Data travels as base64 in JSON.
type AttachmentImage struct {
	ID       string `json:"id"`
	MimeType string `json:"mime_type"`
	Filename string `json:"filename,omitempty"`
	Format   string `json:"format"`
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`
	Note     string `json:"note,omitempty"`
	Data     []byte `json:"data"`
}

// AttachmentImage reads an image attachment for a caller that writes the
// file itself: the unprivileged side of the bridge, which saves inside its
// own profile's file_dirs (the helper never writes where a client asks).
func (s *Service) AttachmentImage(ctx context.Context, prm AttachmentParams) (AttachmentImage, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return AttachmentImage{}, err
	}
	id := strings.TrimSpace(prm.AttachmentID)
	if id == "" {
		return AttachmentImage{}, userErr("attachment_id is required: take it from a message's attachments in get_conversation_messages")
	}
	limit := prm.MaxBytes
	if limit <= 0 || limit > MaxAttachmentBytes {
		limit = MaxAttachmentBytes
	}
	return s.attachmentImage(ctx, p, id, limit)
}

// CheckSave checks save_attachment's arguments before anything is read:
// an attachment id, and a destination inside AllowedDirs whose folder
// exists.
func CheckSave(prm SaveParams) error {
	if strings.TrimSpace(prm.AttachmentID) == "" {
		return userErr("attachment_id is required: take it from a message's attachments in get_conversation_messages")
	}
	_, _, err := checkDestination(prm.Destination, prm.AllowedDirs)
	return err
}

// WriteAttachment writes a checked image (from AttachmentImage, possibly
// across the bridge) to prm.Destination under save_attachment's rules:
// the destination is checked again, the bytes are checked again (size and
// decode, so a file is never written from bytes that are not an image),
// and the file is written atomically with mode 0600.
func WriteAttachment(prm SaveParams, img AttachmentImage) (Saved, error) {
	dir, dest, err := checkDestination(prm.Destination, prm.AllowedDirs)
	if err != nil {
		return Saved{}, err
	}
	id := strings.TrimSpace(prm.AttachmentID)
	if int64(len(img.Data)) > MaxAttachmentBytes {
		return Saved{}, userErr("the attachment is larger than %d bytes; it was not saved", MaxAttachmentBytes)
	}
	format, w, h, note, err := checkImage(id, img.Data)
	if err != nil {
		return Saved{}, err
	}
	out := Saved{Destination: dest, Bytes: int64(len(img.Data)), MimeType: output.Name(img.MimeType), Filename: output.Filename(img.Filename),
		Format: format, Width: w, Height: h, Note: note}
	if out.MimeType == "" {
		out.MimeType = "image/" + out.Format
	}
	over, err := writeAtomic(dir, dest, img.Data, prm.Overwrite)
	if err != nil {
		return Saved{}, err
	}
	out.Overwrote = over
	return out, nil
}

// attachmentImage finds, reads (at most limit bytes) and checks an image
// attachment. The read policy p is applied to the attachment's own
// conversation, whatever the index's own filter said.
func (s *Service) attachmentImage(ctx context.Context, p *policy.Policy, id string, limit int64) (AttachmentImage, error) {
	loc, src, err := s.locateAttachment(ctx, p, id)
	if err != nil {
		return AttachmentImage{}, err
	}
	mime, filename := strings.ToLower(strings.TrimSpace(loc.MimeType)), loc.Filename
	if mime != "" && !strings.HasPrefix(mime, "image/") {
		return AttachmentImage{}, userErr("attachment %s is %s, not an image; only images can be saved", output.Name(id), output.Name(mime))
	}
	data, err := readAttachment(id, filename, src, limit)
	if err != nil {
		return AttachmentImage{}, err
	}
	format, w, h, note, err := checkImage(id, data)
	if err != nil {
		return AttachmentImage{}, err
	}
	return AttachmentImage{ID: output.Name(id), MimeType: output.Name(mime), Filename: output.Filename(filename), Format: format,
		Width: w, Height: h, Note: note, Data: data}, nil
}

// locateAttachment finds an attachment the read policy lets this caller
// see and the file it lives in. Every reader of attachment files goes
// through it (save_attachment, get_attachment, the bridge's actions), so
// the rules are one: an attachment of a blocked thread, or sent by a
// blocked person in a thread the policy allows, does not exist (the same
// sentence as an unknown id), and a file outside the Messages folders is
// refused by name of the problem.
func (s *Service) locateAttachment(ctx context.Context, p *policy.Policy, id string) (index.AttachmentLocation, string, error) {
	missing := notFound("attachment %s was not found in the messages Tidings can read, or its file is not on this machine", output.Name(id))
	loc, err := s.ix.AttachmentFile(ctx, id)
	switch {
	case errors.Is(err, index.ErrNotFound):
		return loc, "", missing
	case err != nil:
		return loc, "", fmt.Errorf("find attachment: %w", err)
	case !allowConv(p, loc.Conversation):
		return loc, "", missing
	}
	if hiddenAuthor(p, loc) {
		return loc, "", missing // a blocked person's photo in a thread the policy allows
	}
	src := loc.Path
	if src == "" {
		// The index holds no path for the file: ask the source.
		src, err = s.sourcePath(ctx, loc)
		if err != nil {
			return loc, "", err
		}
	}
	if src == "" {
		return loc, "", missing
	}
	return loc, src, nil
}

// checkImage decides whether data is an image that may be saved: HEIC by
// its signature (Go cannot decode it), else a full decode of PNG, JPEG or
// GIF within MaxAttachmentPixels.
func checkImage(id string, data []byte) (format string, width, height int, note string, err error) {
	if len(data) >= 12 && string(data[4:8]) == "ftyp" && heifBrands[string(data[8:12])] {
		return "heic", 0, 0, "HEIC recognised by its file signature: Go cannot decode HEIC, so the picture itself was not checked", nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", 0, 0, "", userErr("attachment %s is not a PNG, JPEG, GIF or HEIC image, so it was not saved", output.Name(id))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxAttachmentPixels {
		return "", 0, 0, "", userErr("attachment %s is %d×%d pixels; images above %d pixels are not saved", output.Name(id), cfg.Width, cfg.Height, MaxAttachmentPixels)
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return "", 0, 0, "", userErr("attachment %s does not decode as a %s image, so it was not saved", output.Name(id), format)
	}
	return format, cfg.Width, cfg.Height, "", nil
}

// AttachmentResolver finds an attachment's file in a source database by
// its row id (the tools' attachment_id); *imessage.Reader implements it.
type AttachmentResolver interface {
	Attachment(ctx context.Context, rowID int64) (model.Attachment, error)
}

// sourcePath asks the attachment resolver (the chat.db reader) for the
// file of an iMessage attachment by its row id. The answer counts only when
// it is the same attachment (same guid), so a row id of another database
// is never taken for it. "" when there is no such file; an error when the
// source refuses the file's path (model.ErrAttachmentOutside).
func (s *Service) sourcePath(ctx context.Context, loc index.AttachmentLocation) (string, error) {
	if s.att == nil || loc.RowID <= 0 || loc.GUID == "" || loc.Source != model.SourceIMessage {
		return "", nil
	}
	a, err := s.att.Attachment(ctx, loc.RowID)
	if errors.Is(err, model.ErrAttachmentOutside) {
		return "", userErr("attachment %s's file is outside the Messages folders (through a symbolic link or a path that leaves them), so Tidings does not read it", output.Name(loc.ID))
	}
	if err != nil || a.Path == "" || a.ID != loc.GUID {
		return "", nil
	}
	return a.Path, nil
}

// checkDestination validates save_attachment's destination and returns
// its resolved folder and the final path inside it.
func checkDestination(dest string, allowed []string) (dir, path string, err error) {
	return checkTarget("destination", dest, allowed)
}

// checkTarget validates a file a tool is about to write, named by the
// tool's parameter param: an absolute file path whose folder exists and,
// with every symbolic link resolved, lies inside one of allowed (the
// profile's file_dirs); an existing file there must be a regular file,
// never a link, FIFO or device. It returns the resolved folder and the
// final path inside it (docs/security.md, "Files only where allowed").
func checkTarget(param, dest string, allowed []string) (dir, path string, err error) {
	if len(allowed) == 0 {
		return "", "", userErr("no folders are allowed for saving files; a profile's file_dirs must name them")
	}
	dest = strings.TrimSpace(dest)
	switch {
	case dest == "":
		return "", "", userErr("%s is required: give the absolute path of the file to write, inside %s", param, strings.Join(allowed, " or "))
	case !filepath.IsAbs(dest):
		return "", "", userErr("%s must be an absolute file path (got %q)", param, output.Name(dest))
	case strings.HasSuffix(dest, string(filepath.Separator)):
		return "", "", userErr("%s must name a file, not a folder", param)
	}
	dest = filepath.Clean(dest)
	name := filepath.Base(dest)
	if name == "." || name == ".." || name == string(filepath.Separator) {
		return "", "", userErr("%s must name a file, not a folder", param)
	}
	rdir, err := filepath.EvalSymlinks(filepath.Dir(dest))
	if err != nil {
		return "", "", userErr("the folder %s does not exist; create it first or choose another %s", output.Name(filepath.Dir(dest)), param)
	}
	if fi, err := os.Stat(rdir); err != nil || !fi.IsDir() {
		return "", "", userErr("%s is not a folder", output.Name(filepath.Dir(dest)))
	}
	if !insideAny(rdir, allowed, true) {
		return "", "", userErr("%s is outside the folders files may be saved in (%s)", param, strings.Join(allowed, ", "))
	}
	path = filepath.Join(rdir, name)
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", "", userErr("%s %s is a symbolic link; choose another file name", param, output.Name(dest))
		case !fi.Mode().IsRegular():
			return "", "", userErr("%s %s exists and is not a regular file", param, output.Name(dest))
		}
	}
	return rdir, path, nil
}

// insideAny reports whether the resolved path p lies inside one of
// allowed, each resolved itself; orSame accepts p being the folder itself.
func insideAny(p string, allowed []string, orSame bool) bool {
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(ra, p)
		if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if rel != "." || orSame {
			return true
		}
	}
	return false
}

// readAttachment reads the attachment file, at most limit bytes. The file
// is opened without following a symbolic link (the source checked the
// folders on the way, docs/security.md) and must be a regular file. A file
// that is not there is one Messages has not downloaded: with "Optimize Mac
// Storage" (iCloud) the row names it and the disk has none until the
// conversation is opened in Messages.
func readAttachment(id, filename, path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		name := ""
		if filename != "" {
			name = " (" + output.Filename(filename) + ")"
		}
		return nil, notFound("attachment %s%s is not downloaded to this Mac: it is kept in iCloud until the conversation is opened in Messages, so open it there and ask again", output.Name(id), name)
	case errLink(err):
		return nil, userErr("attachment %s's file is a symbolic link, so Tidings does not read it", output.Name(id))
	case err != nil:
		return nil, notFound("the attachment's file cannot be read on this machine")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, notFound("the attachment's file cannot be read on this machine")
	}
	if fi.Size() > limit {
		return nil, userErr("the attachment has %d bytes; files above %d bytes are not saved or shown", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, userErr("the attachment is larger than %d bytes; it was not saved or shown", limit)
	}
	return data, nil
}

// writeAtomic writes data to path under PlaceFile's rules (a temporary
// file in dir linked into place, so an existing file is replaced only with
// overwrite).
func writeAtomic(dir, path string, data []byte, overwrite bool) (overwrote bool, err error) {
	return PlaceFile(dir, path, bytes.NewReader(data), overwrite)
}
