package imessage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// attachmentSelect returns the SELECT list over "message_attachment_join j
// JOIN attachment a"; the first column is j.message_id, then the
// attachment's own columns (same order as scanAttachment), then filename.
func (s *schema) attachmentSelect() string {
	c := func(name, neutral string) string { return s.col("attachment", "a", name, neutral) }
	return "SELECT j.message_id, a.ROWID, COALESCE(a.guid, ''), COALESCE(" + c("transfer_name", "NULL") + ", ''), " +
		"COALESCE(" + c("mime_type", "NULL") + ", ''), COALESCE(" + c("uti", "NULL") + ", ''), " +
		"COALESCE(" + c("total_bytes", "0") + ", 0), COALESCE(" + c("is_sticker", "0") + ", 0), " +
		"COALESCE(" + c("is_outgoing", "0") + ", 0), COALESCE(" + c("filename", "NULL") + ", '') " +
		"FROM message_attachment_join j JOIN attachment a ON a.ROWID = j.attachment_id"
}

// attRow is one scanned attachment row.
type attRow struct {
	msgID    int64
	a        model.Attachment
	filename string // disk path as stored; internal
}

func scanAttachment(rows *sql.Rows) (attRow, error) {
	var r attRow
	var sticker, outgoing int64
	err := rows.Scan(&r.msgID, &r.a.RowID, &r.a.ID, &r.a.Filename, &r.a.MimeType, &r.a.UTI, &r.a.Size, &sticker, &outgoing, &r.filename)
	if err != nil {
		return r, err
	}
	r.a.Sticker, r.a.Outgoing = sticker != 0, outgoing != 0
	if r.a.Size < 0 {
		r.a.Size = 0 // -1 is "unknown" in newer schemas
	}
	if r.a.Filename == "" && r.filename != "" {
		// Old rows have no transfer_name; the base name is still a name,
		// never a path.
		r.a.Filename = path.Base(filepath.ToSlash(r.filename))
	}
	if r.a.MimeType == "" {
		r.a.MimeType = mimeFor(r.a.UTI, r.a.Filename)
	}
	return r, nil
}

// attachmentSource returns a message's attachments in attachment ROWID order.
type attachmentSource interface {
	get(ctx context.Context, msgRowID int64) ([]model.Attachment, error)
}

// windowAttachments serves a ROWID-ordered pass: it fetches attachments for
// a window of message ROWIDs at a time, so memory is bounded by the window.
type windowAttachments struct {
	r     *Reader
	q     queryer
	limit int64 // highest message ROWID of the pass
	hi    int64 // window covers (lo, hi]
	buf   []attRow
	pos   int
	init  bool
}

func (w *windowAttachments) get(ctx context.Context, id int64) ([]model.Attachment, error) {
	if !w.r.sch.tables["message_attachment_join"] || !w.r.sch.tables["attachment"] {
		return nil, nil
	}
	if !w.init || id > w.hi {
		lo := id - 1
		hi := lo + attachmentWindow
		if hi > w.limit || hi < lo {
			hi = w.limit
		}
		rows, err := w.q.QueryContext(ctx, w.r.sch.attachmentSelect()+" WHERE j.message_id > ? AND j.message_id <= ? ORDER BY j.message_id, a.ROWID", lo, hi)
		if err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		w.buf, w.pos = w.buf[:0], 0
		for rows.Next() {
			a, err := scanAttachment(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read attachments: %w", err)
			}
			w.buf = append(w.buf, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		w.hi, w.init = hi, true
	}
	for w.pos < len(w.buf) && w.buf[w.pos].msgID < id {
		w.pos++
	}
	var out []model.Attachment
	for w.pos < len(w.buf) && w.buf[w.pos].msgID == id {
		out = append(out, w.buf[w.pos].a)
		w.pos++
	}
	return out, nil
}

// pointAttachments looks attachments up one message at a time, for sparse
// queries (Changed, MessageByGUID).
type pointAttachments struct {
	r    *Reader
	q    queryer
	stmt *sql.Stmt
}

func (p *pointAttachments) get(ctx context.Context, id int64) ([]model.Attachment, error) {
	if !p.r.sch.tables["message_attachment_join"] || !p.r.sch.tables["attachment"] {
		return nil, nil
	}
	if p.stmt == nil {
		st, err := p.q.PrepareContext(ctx, p.r.sch.attachmentSelect()+" WHERE j.message_id = ? ORDER BY a.ROWID")
		if err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		p.stmt = st
	}
	rows, err := p.stmt.QueryContext(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read attachments: %w", err)
	}
	defer rows.Close()
	var out []model.Attachment
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		out = append(out, a.a)
	}
	return out, rows.Err()
}

func (p *pointAttachments) close() {
	if p.stmt != nil {
		p.stmt.Close()
	}
}

// Attachment returns one attachment by attachment ROWID (the attachment_id
// the tools expose), with Path resolved to the file on disk or in the backup
// for a save operation. Path is empty when the database names no file; the
// file itself may still be missing (offloaded to iCloud, not in the backup),
// which the caller discovers when it opens Path. ErrNotFound when no row has
// that id.
func (r *Reader) Attachment(ctx context.Context, rowID int64) (model.Attachment, error) {
	if !r.sch.tables["attachment"] {
		return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, ErrNotFound)
	}
	// A LEFT JOIN keeps attachments that no message references.
	q := strings.Replace(r.sch.attachmentSelect(), "FROM message_attachment_join j JOIN attachment a ON a.ROWID = j.attachment_id",
		"FROM attachment a LEFT JOIN message_attachment_join j ON j.attachment_id = a.ROWID", 1)
	q = strings.Replace(q, "SELECT j.message_id,", "SELECT COALESCE(j.message_id, 0),", 1)
	rows, err := r.db.QueryContext(ctx, q+" WHERE a.ROWID = ? LIMIT 1", rowID)
	if err != nil {
		return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, err)
		}
		return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, ErrNotFound)
	}
	a, err := scanAttachment(rows)
	if err != nil {
		return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, err)
	}
	a.a.Path, err = r.resolvePath(a.filename)
	if err != nil {
		return model.Attachment{}, fmt.Errorf("attachment %d: %w", rowID, err)
	}
	return a.a, nil
}

// resolvePath maps attachment.filename to a file for a save operation.
// Apple stores "~/Library/Messages/Attachments/…" (macOS) or
// "~/Library/SMS/Attachments/…" (iOS). For the live database "~" is the
// user's home; for a copy elsewhere (a copied Messages folder, the demo) the
// same path is looked up next to the copied database, so a copy never reads
// the live user's files. In an iOS backup the file lives under its hashed
// name. The result must stay inside those folders: a stored path that
// escapes them ("~/Library/Messages/../../.ssh/id_rsa") is refused.
func (r *Reader) resolvePath(stored string) (string, error) {
	if stored == "" {
		return "", nil
	}
	if r.backup != nil {
		return r.backup.attachmentPath(stored)
	}
	slash := filepath.ToSlash(stored)
	dbDir := filepath.Dir(r.path)
	var roots []string
	if r.home != "" {
		roots = append(roots, filepath.Join(r.home, "Library", "Messages"), filepath.Join(r.home, "Library", "SMS"))
	}
	live := false
	for _, root := range roots {
		if dbDir == root {
			live = true
		}
	}
	roots = append(roots, dbDir)
	var resolved string
	switch {
	case strings.HasPrefix(slash, "~/"):
		rel := slash[2:]
		if !live {
			for _, prefix := range []string{"Library/Messages/", "Library/SMS/"} {
				if strings.HasPrefix(rel, prefix) {
					resolved = filepath.Join(dbDir, filepath.FromSlash(rel[len(prefix):]))
				}
			}
		}
		if resolved == "" {
			if r.home == "" {
				return "", errors.New("cannot resolve ~ in attachment path: no home directory")
			}
			resolved = filepath.Join(r.home, filepath.FromSlash(rel))
		}
	case strings.HasPrefix(slash, "/"):
		resolved = filepath.Clean(filepath.FromSlash(slash))
	default:
		resolved = filepath.Join(dbDir, filepath.FromSlash(slash))
	}
	for _, root := range roots {
		if within(root, resolved) {
			return resolved, noLinks(root, resolved)
		}
	}
	return "", fmt.Errorf("attachment path %q: %w", stored, model.ErrAttachmentOutside)
}

// noLinks refuses a file below root that is reached through a symbolic
// link (the file itself or a folder between root and it): Messages writes
// real folders and files, and a link planted there could point anywhere.
// root itself may sit behind links (macOS's /var is one). A file that does
// not exist (still in iCloud) passes; opening it says so.
func noLinks(root, p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if _, lerr := os.Lstat(p); lerr == nil {
			// It exists but does not resolve: a dangling or looping link.
			return fmt.Errorf("attachment file: %w", model.ErrAttachmentOutside)
		}
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("attachment file: %w", model.ErrAttachmentOutside)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.Join(realRoot, rel) != real {
		return fmt.Errorf("attachment file is reached through a symbolic link: %w", model.ErrAttachmentOutside)
	}
	return nil
}

// within reports whether p is root or below it (both cleaned, absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// utiMIME maps the UTIs Messages stores to MIME types, for rows whose
// mime_type is NULL.
var utiMIME = map[string]string{
	"public.jpeg":                        "image/jpeg",
	"public.png":                         "image/png",
	"public.heic":                        "image/heic",
	"public.heif":                        "image/heif",
	"com.compuserve.gif":                 "image/gif",
	"public.tiff":                        "image/tiff",
	"com.microsoft.bmp":                  "image/bmp",
	"org.webmproject.webp":               "image/webp",
	"public.webp":                        "image/webp",
	"public.svg-image":                   "image/svg+xml",
	"com.apple.quicktime-movie":          "video/quicktime",
	"public.mpeg-4":                      "video/mp4",
	"public.3gpp":                        "video/3gpp",
	"public.avi":                         "video/x-msvideo",
	"com.apple.coreaudio-format":         "audio/x-caf",
	"public.mp3":                         "audio/mpeg",
	"public.mpeg-4-audio":                "audio/mp4",
	"com.apple.m4a-audio":                "audio/mp4",
	"org.3gpp.adaptive-multi-rate-audio": "audio/amr",
	"public.aiff-audio":                  "audio/aiff",
	"com.microsoft.waveform-audio":       "audio/wav",
	"com.adobe.pdf":                      "application/pdf",
	"public.vcard":                       "text/vcard",
	"public.plain-text":                  "text/plain",
	"public.html":                        "text/html",
	"public.zip-archive":                 "application/zip",
	"com.apple.pkpass":                   "application/vnd.apple.pkpass",
	"com.microsoft.word.doc":             "application/msword",
	"org.openxmlformats.wordprocessingml.document": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"com.apple.location":                           "text/x-vlocation",
}

// extMIME maps file extensions when neither mime_type nor a known UTI is
// stored. A fixed table keeps results identical on every machine (the
// system's mime.types varies).
var extMIME = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".heic": "image/heic", ".heif": "image/heif",
	".gif": "image/gif", ".tif": "image/tiff", ".tiff": "image/tiff", ".webp": "image/webp", ".bmp": "image/bmp",
	".mov": "video/quicktime", ".mp4": "video/mp4", ".m4v": "video/mp4", ".3gp": "video/3gpp",
	".caf": "audio/x-caf", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".amr": "audio/amr", ".wav": "audio/wav",
	".pdf": "application/pdf", ".vcf": "text/vcard", ".txt": "text/plain", ".zip": "application/zip",
	".pkpass": "application/vnd.apple.pkpass",
}

// mimeFor derives a MIME type from the UTI, then the file extension; empty
// when neither is known.
func mimeFor(uti, name string) string {
	if m, ok := utiMIME[strings.ToLower(uti)]; ok {
		return m
	}
	if m, ok := extMIME[strings.ToLower(path.Ext(name))]; ok {
		return m
	}
	return ""
}

// AttachmentNames calls fn for every attachment a message carries, with
// the message ROWID, the attachment ROWID and the name a message read
// gives it (transfer_name, else the base of the stored path). A sender can
// rename an attachment after it was read, and that changes only the
// attachment row — no message date — so an index compares these names with
// the ones it holds to find messages to read again (index.RowSource).
func (r *Reader) AttachmentNames(ctx context.Context, fn func(msgRowID, attRowID int64, name string) error) error {
	if !r.sch.tables["message_attachment_join"] || !r.sch.tables["attachment"] {
		return nil
	}
	rows, err := r.db.QueryContext(ctx, r.sch.attachmentSelect()+" ORDER BY j.message_id, a.ROWID")
	if err != nil {
		return fmt.Errorf("read attachment names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return fmt.Errorf("read attachment names: %w", err)
		}
		if err := fn(a.msgID, a.a.RowID, a.a.Filename); err != nil {
			return err
		}
	}
	return rows.Err()
}

// MessagesByRowID calls fn, in ROWID order, for the messages with the given
// ROWIDs that exist (for reading messages again, as Changed does).
func (r *Reader) MessagesByRowID(ctx context.Context, rowIDs []int64, fn func(model.Message) error) error {
	const chunk = 500
	for len(rowIDs) > 0 {
		n := min(len(rowIDs), chunk)
		args := make([]any, n)
		for i, id := range rowIDs[:n] {
			args[i] = id
		}
		where := "WHERE m.ROWID IN (?" + strings.Repeat(",?", n-1) + ") ORDER BY m.ROWID"
		if err := r.sparse(ctx, where, args, fn); err != nil {
			return err
		}
		rowIDs = rowIDs[n:]
	}
	return nil
}
