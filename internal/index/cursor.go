package index

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// cursor is the decoded form of Result.NextCursor.
type cursor struct {
	Mode   Mode   `json:"m"`
	Offset int    `json:"o,omitempty"`
	Time   int64  `json:"t,omitempty"`
	ID     int64  `json:"i,omitempty"`
	Print  string `json:"p"`
}

func (q *Query) fingerprint() string {
	h := sha256.New()
	b, _ := json.Marshal([]any{q.Text, q.Mode, q.ConversationID, q.Contact, q.Handles, q.Days, q.Since, q.Until, q.FromMe, q.LiteralDates})
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, q *Query) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	if c.Print != q.fingerprint() || c.Mode != q.Mode {
		return c, fmt.Errorf("cursor belongs to another query: %w", ErrBadCursor)
	}
	if c.Offset < 0 || c.Offset > MaxDepth {
		return c, fmt.Errorf("cursor offset: %w", ErrBadCursor)
	}
	return c, nil
}
