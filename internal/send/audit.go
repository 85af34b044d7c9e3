package send

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Audit events, one JSON line each in $TIDINGS_HOME/audit.jsonl.
const (
	EventPreview      = "preview"      // outcome: nonce_issued, blocked, refused
	EventSendRefused  = "send_refused" // the gate refused before any dialog; code says why
	EventConfirmation = "confirmation" // outcome: approved, cancelled, timeout, failed
	EventSendStarted  = "send_started" // written before the sender runs; counts towards the rate limit
	EventSendResult   = "send_result"  // outcome: a delivery status, or error
)

// AuditEntry is one line of the audit log. It identifies a message by the
// SHA-256 of its text and its length, never by the text itself.
type AuditEntry struct {
	Time        string `json:"time"`
	Event       string `json:"event"`
	Outcome     string `json:"outcome"`
	Code        Code   `json:"code,omitempty"`
	Recipient   string `json:"recipient,omitempty"`
	Service     string `json:"service,omitempty"`
	TextSHA256  string `json:"text_sha256,omitempty"`
	TextLength  int    `json:"text_length,omitempty"`
	NearSHA256  string `json:"near_sha256,omitempty"`
	ImageSHA256 string `json:"image_sha256,omitempty"`
	NonceID     string `json:"nonce_id,omitempty"`
	AppleError  int    `json:"apple_error,omitempty"`
	Rows        int    `json:"rows,omitempty"`
}

// auditMaxRead bounds how much of the log the rate limit and the duplicate
// guard read (its tail); an hour of sends is a few kilobytes.
const auditMaxRead = 4 << 20

// auditLog appends entries to the audit file and reads recent ones back.
type auditLog struct{ path string }

// append writes one entry as a single line. The file is opened for each
// entry with O_APPEND|O_NOFOLLOW and created 0600; a file that is a
// symlink, not ours or readable by others is refused, and so the send is.
func (a auditLog) append(e AuditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	if err := checkPrivateFile(f); err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("write audit log: %w", err)
	}
	return f.Close()
}

// recent returns the entries of the given event newer than since, oldest
// first, from the last auditMaxRead bytes of the log. A missing log has no
// entries; lines that do not parse are skipped.
func (a auditLog) recent(event string, since time.Time) ([]AuditEntry, []time.Time, error) {
	f, err := os.OpenFile(a.path, os.O_RDONLY|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	if err := checkPrivateFile(f); err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	skipFirst := false
	if fi.Size() > auditMaxRead {
		if _, err := f.Seek(fi.Size()-auditMaxRead, io.SeekStart); err != nil {
			return nil, nil, err
		}
		skipFirst = true
	}
	var out []AuditEntry
	var times []time.Time
	sc := bufio.NewScanner(io.LimitReader(f, auditMaxRead))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if skipFirst {
			skipFirst = false
			continue
		}
		b := sc.Bytes()
		if !bytes.Contains(b, []byte(`"`+event+`"`)) {
			continue
		}
		var e AuditEntry
		if json.Unmarshal(b, &e) != nil || e.Event != event {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, e.Time)
		if err != nil || !t.After(since) {
			continue
		}
		out = append(out, e)
		times = append(times, t)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, times, nil
}

// hashText returns the hex SHA-256 of s.
func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
