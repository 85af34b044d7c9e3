package triage

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Bounds of get_response_stats' hours parameter: (0, MaxHours], default
// DefaultHours. A year is the largest window: beyond it an average says
// little about how one replies now, and the dossier's per-quarter trend
// covers the long view.
const (
	DefaultHours = 24
	MaxHours     = 8760
)

// Sample is one reply: the first message of an inbound run and the
// owner's first message after it.
type Sample struct {
	InboundID string    `json:"inbound_id"`
	ReplyID   string    `json:"reply_id"`
	Inbound   time.Time `json:"inbound"`
	Reply     time.Time `json:"reply"`
	Seconds   int64     `json:"seconds"`
}

// counts reports whether a message is a turn in the conversation:
// reactions, group events, unsent messages and failed sends are not.
func counts(m *Message) bool {
	switch m.Kind {
	case model.MsgReaction, model.MsgGroupEvent:
		return false
	}
	return !m.Unsent && !(m.FromMe && m.Error != 0)
}

// ReplyTracker finds replies in a chronological stream of messages.
// Consecutive messages of one side form a turn; a reply is the first
// message of a turn that follows a turn of the other side, and its delay
// is measured from the first message of that turn — how long the other
// side had been waiting. The tracker follows both directions: the owner's
// replies (Add's first result) and the other side's (the second).
//
// Its fields are exported so the state can be stored (the dossier keeps one
// between incremental updates); the zero value is ready to use.
type ReplyTracker struct {
	// Side is "" before the first turn, "me" or "them".
	Side string `json:"side,omitempty"`
	// TurnStart and TurnID are the first message of the current turn.
	TurnStart time.Time `json:"turn_start,omitzero"`
	TurnID    string    `json:"turn_id,omitempty"`
}

// Add feeds the next message (in time order). mine is set when the
// message is the owner's reply to an inbound turn, theirs when it is the
// other side's reply to an owner's turn.
func (r *ReplyTracker) Add(m *Message) (mine, theirs Sample, ok bool) {
	if !counts(m) {
		return Sample{}, Sample{}, false
	}
	side := "them"
	if m.FromMe {
		side = "me"
	}
	if side == r.Side {
		return Sample{}, Sample{}, false
	}
	prevSide, start, id := r.Side, r.TurnStart, r.TurnID
	r.Side, r.TurnStart, r.TurnID = side, m.Time, m.ID
	if prevSide == "" {
		return Sample{}, Sample{}, false
	}
	s := Sample{InboundID: id, ReplyID: m.ID, Inbound: start, Reply: m.Time, Seconds: int64(math.Round(m.Time.Sub(start).Seconds()))}
	if s.Seconds < 0 {
		s.Seconds = 0 // clocks of two devices disagree; never a negative delay
	}
	if side == "me" {
		return s, Sample{}, true
	}
	return Sample{}, s, true
}

// Stats are get_response_stats' figures, named as in the bridge protocol
// (docs/bridge.md). The second-valued fields are nil when there is no sample
// (an honest "no data", never a made-up 0).
type Stats struct {
	Hours         float64 `json:"hours"`
	SampleSize    int     `json:"sample_size"`
	AvgSeconds    *int64  `json:"avg_seconds"`
	AvgHuman      string  `json:"avg_human"`
	MedianSeconds *int64  `json:"median_seconds"`
	MinSeconds    *int64  `json:"min_seconds"`
	MaxSeconds    *int64  `json:"max_seconds"`
	// Totals count the messages in the window on each side (reactions,
	// group events, unsent messages and failed sends excluded).
	TotalInbound  int `json:"total_inbound_messages"`
	TotalOutbound int `json:"total_outbound_messages"`
	// Samples are the replies measured, oldest first (not part of the
	// bridge protocol's response; useful for citing and tests).
	Samples []Sample `json:"-"`
}

// ResponseStats computes the owner's reply times over the messages of one
// contact (any number of their conversations, merged and sorted by time)
// whose time lies in (now − hours, now]. Both ends of a reply must lie in
// the window. hours ≤ 0 means DefaultHours; the caller validates the
// bounds (coerce; (0, MaxHours]).
func ResponseStats(msgs []Message, now time.Time, hours float64) Stats {
	if hours <= 0 {
		hours = DefaultHours
	}
	since := now.Add(-time.Duration(hours * float64(time.Hour)))
	in := make([]*Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if m.Time.After(since) && !m.Time.After(now) {
			in = append(in, m)
		}
	}
	slices.SortStableFunc(in, func(a, b *Message) int { return a.Time.Compare(b.Time) })
	st := Stats{Hours: hours}
	var tr ReplyTracker
	for _, m := range in {
		if counts(m) {
			if m.FromMe {
				st.TotalOutbound++
			} else {
				st.TotalInbound++
			}
		}
		if mine, _, ok := tr.Add(m); ok && mine.ReplyID != "" {
			st.Samples = append(st.Samples, mine)
		}
	}
	summarize(&st)
	return st
}

func summarize(st *Stats) {
	n := len(st.Samples)
	st.SampleSize = n
	if n == 0 {
		return
	}
	secs := make([]int64, n)
	var sum float64
	for i, s := range st.Samples {
		secs[i] = s.Seconds
		sum += float64(s.Seconds)
	}
	slices.Sort(secs)
	avg := int64(math.Round(sum / float64(n)))
	med := secs[n/2]
	if n%2 == 0 {
		med = int64(math.Round(float64(secs[n/2-1]+secs[n/2]) / 2))
	}
	lo, hi := secs[0], secs[n-1]
	st.AvgSeconds, st.MedianSeconds, st.MinSeconds, st.MaxSeconds = &avg, &med, &lo, &hi
	st.AvgHuman = HumanSeconds(avg)
}

// HumanSeconds formats a duration the way the bridge protocol's avg_human
// does (docs/tools.md, get_response_stats):
// whole seconds under a minute ("45s"), then minutes, hours and days with
// one decimal ("18.3m", "2.1h", "1.5d").
func HumanSeconds(s int64) string {
	// Each unit is used while its one-decimal rounding stays below the next
	// unit, so 3599 s is "1.0h", never "60.0m".
	r1 := func(v float64) float64 { return math.Round(v*10) / 10 }
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", max(s, 0))
	case r1(float64(s)/60) < 60:
		return fmt.Sprintf("%.1fm", float64(s)/60)
	case r1(float64(s)/3600) < 24:
		return fmt.Sprintf("%.1fh", float64(s)/3600)
	default:
		return fmt.Sprintf("%.1fd", float64(s)/86400)
	}
}
