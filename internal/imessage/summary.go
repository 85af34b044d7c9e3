package imessage

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"

	"howett.net/plist"

	"github.com/tidings-mcp/tidings/internal/model"
)

// summaryInfo is the part of message_summary_info (a binary plist) that
// describes edits and unsent parts:
//
//	ec  part index → versions [{d: seconds since 2001, t: typedstream body, bcg?}], oldest first
//	otr part index → {lo, le} UTF-16 range of the part in the body
//	rp  unsent part indexes
//	ep  edited part indexes
type summaryInfo struct {
	EC  map[string][]summaryVersion `plist:"ec"`
	OTR map[string]summaryRange     `plist:"otr"`
	RP  []int64                     `plist:"rp"`
	EP  []int64                     `plist:"ep"`
}

type summaryVersion struct {
	D   float64 `plist:"d"`
	T   []byte  `plist:"t"`
	BCG string  `plist:"bcg"`
}

type summaryRange struct {
	Lo int64 `plist:"lo"`
	Le int64 `plist:"le"`
}

// Binary-plist key objects for "ec" and "rp": an ASCII string of length 2
// is the marker byte 0x52 followed by its bytes. Most rows carry a summary
// with neither key (only "amc"/"ust"), so a byte search skips the decode.
var (
	keyEC = []byte{0x52, 'e', 'c'}
	keyRP = []byte{0x52, 'r', 'p'}
)

// parseSummary decodes the edit/unsend part of message_summary_info. It
// returns nil, nil for a summary that carries neither.
func parseSummary(blob []byte) (*summaryInfo, error) {
	if len(blob) == 0 {
		return nil, nil
	}
	if bytes.HasPrefix(blob, []byte("bplist")) && !bytes.Contains(blob, keyEC) && !bytes.Contains(blob, keyRP) {
		return nil, nil
	}
	var s summaryInfo
	if _, err := plist.Unmarshal(blob, &s); err != nil {
		return nil, fmt.Errorf("message_summary_info: %w", err)
	}
	return &s, nil
}

// applySummary fills edit and unsend state from message_summary_info and
// the date_edited/date_retracted columns.
func applySummary(blob []byte, dateEdited, dateRetracted int64, m *model.Message, log *slog.Logger) {
	m.TimeEdited = appleTime(dateEdited)
	m.TimeUnsent = appleTime(dateRetracted)
	m.Edited = dateEdited != 0
	s, err := parseSummary(blob)
	if err != nil {
		log.Debug("unreadable message_summary_info", "rowid", m.RowID, "err", err)
	}
	if s == nil {
		if dateRetracted != 0 && m.Text == "" {
			// Unsent with no summary left: the whole message is gone.
			m.Unsent = true
		}
		return
	}
	parts := make([]int, 0, len(s.EC))
	for k := range s.EC {
		if n, err := strconv.Atoi(k); err == nil && n >= 0 {
			parts = append(parts, n)
		}
	}
	sort.Ints(parts)
	for _, p := range parts {
		for _, v := range s.EC[strconv.Itoa(p)] {
			text, _, err := decodeBody(v.T)
			if err != nil {
				log.Debug("undecodable edit version", "rowid", m.RowID, "part", p, "err", err)
				continue
			}
			m.Edits = append(m.Edits, model.Edit{Part: p, Time: appleSeconds(v.D), Text: text})
		}
	}
	if len(m.Edits) > 0 {
		m.Edited = true
		if m.TimeEdited.IsZero() {
			m.TimeEdited = m.Edits[len(m.Edits)-1].Time
		}
	}
	for _, p := range s.RP {
		if p >= 0 && p < 1<<20 {
			m.UnsentParts = append(m.UnsentParts, int(p))
		}
	}
	sort.Ints(m.UnsentParts)
	m.UnsentParts = slices.Compact(m.UnsentParts)
	if len(m.UnsentParts) > 0 {
		// Unsent as a whole when every part the summary knows was unsent;
		// a summary without part ranges unsent the only part there was.
		all := true
		for k := range s.OTR {
			n, err := strconv.Atoi(k)
			if err == nil && !slices.Contains(m.UnsentParts, n) {
				all = false
			}
		}
		m.Unsent = all
	} else if dateRetracted != 0 && m.Text == "" {
		m.Unsent = true
	}
}
