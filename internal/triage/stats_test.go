package triage

import (
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

func TestHumanSeconds(t *testing.T) {
	for _, tc := range []struct {
		s    int64
		want string
	}{
		{0, "0s"}, {-5, "0s"}, {45, "45s"}, {59, "59s"}, {60, "1.0m"}, {1098, "18.3m"}, {3569, "59.5m"},
		{3599, "1.0h"}, {3600, "1.0h"}, {7560, "2.1h"}, {86339, "1.0d"}, {86400, "1.0d"}, {129600, "1.5d"},
	} {
		if got := HumanSeconds(tc.s); got != tc.want {
			t.Errorf("HumanSeconds(%d) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// conv builds a chronological conversation from (minutes after t0, side)
// steps: "in", "me", "react-in", "react-me", "event", "fail", "unsent".
func conv(t0 time.Time, steps ...any) []Message {
	var out []Message
	for i := 0; i < len(steps); i += 2 {
		min := steps[i].(int)
		kind := steps[i+1].(string)
		m := Message{ID: kind + "@" + time.Duration(min*int(time.Minute)).String(), Time: t0.Add(time.Duration(min) * time.Minute), Kind: model.MsgText, Text: "x"}
		switch kind {
		case "in":
			m.Sender = "+14155550134"
		case "me":
			m.FromMe = true
		case "react-in":
			m.Kind, m.Sender = model.MsgReaction, "+14155550134"
		case "react-me":
			m.Kind, m.FromMe = model.MsgReaction, true
		case "event":
			m.Kind, m.Sender = model.MsgGroupEvent, "+14155550134"
		case "fail":
			m.FromMe, m.Error = true, 22
		case "unsent":
			m.FromMe, m.Unsent = true, true
		default:
			panic(kind)
		}
		out = append(out, m)
	}
	return out
}

func TestResponseStats(t *testing.T) {
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	t0 := now.Add(-10 * time.Hour)
	ptr := func(v int64) *int64 { return &v }
	type want struct {
		n                  int
		avg, med, min, max *int64
		human              string
		in, out            int
	}
	for _, tc := range []struct {
		name  string
		msgs  []Message
		hours float64
		want  want
	}{
		{"empty", nil, 24, want{}},
		{"only inbound", conv(t0, 0, "in", 5, "in"), 24, want{in: 2}},
		{"only outbound", conv(t0, 0, "me", 5, "me"), 24, want{out: 2}},
		{"one reply", conv(t0, 0, "in", 10, "me"), 24, want{1, ptr(600), ptr(600), ptr(600), ptr(600), "10.0m", 1, 1}},
		{"run collapses, measured from its first message", conv(t0, 0, "in", 20, "in", 30, "me", 31, "me"), 24,
			want{1, ptr(1800), ptr(1800), ptr(1800), ptr(1800), "30.0m", 2, 2}},
		{"owner starts: no sample until an inbound turn", conv(t0, 0, "me", 5, "in", 7, "me"), 24,
			want{1, ptr(120), ptr(120), ptr(120), ptr(120), "2.0m", 1, 2}},
		{"two replies, even median", conv(t0, 0, "in", 1, "me", 60, "in", 120, "me"), 24,
			want{2, ptr(1830), ptr(1830), ptr(60), ptr(3600), "30.5m", 2, 2}},
		{"three replies, odd median", conv(t0, 0, "in", 2, "me", 10, "in", 12, "me", 100, "in", 400, "me"), 24,
			want{3, ptr(6080), ptr(120), ptr(120), ptr(18000), "1.7h", 3, 3}},
		{"reactions are not turns", conv(t0, 0, "in", 3, "react-me", 50, "react-in", 60, "me"), 24,
			want{1, ptr(3600), ptr(3600), ptr(3600), ptr(3600), "1.0h", 1, 1}},
		{"group events are not turns", conv(t0, 0, "in", 5, "event", 9, "me"), 24,
			want{1, ptr(540), ptr(540), ptr(540), ptr(540), "9.0m", 1, 1}},
		{"failed send is no reply", conv(t0, 0, "in", 1, "fail", 45, "me"), 24,
			want{1, ptr(2700), ptr(2700), ptr(2700), ptr(2700), "45.0m", 1, 1}},
		{"unsent message is no reply", conv(t0, 0, "in", 1, "unsent", 30, "me"), 24,
			want{1, ptr(1800), ptr(1800), ptr(1800), ptr(1800), "30.0m", 1, 1}},
		// t0 is 10 h before now: a 9.5 h window starts 30 min after t0.
		{"window cuts the inbound turn", conv(t0, 0, "in", 45, "in", 50, "me"), 9.5,
			want{1, ptr(300), ptr(300), ptr(300), ptr(300), "5.0m", 1, 1}},
		{"window excludes everything", conv(t0, 0, "in", 5, "me"), 1, want{}},
		{"default hours", conv(t0, 0, "in", 5, "me"), 0, want{1, ptr(300), ptr(300), ptr(300), ptr(300), "5.0m", 1, 1}},
		{"a lone inbound message", conv(t0, 0, "in"), 24, want{in: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ResponseStats(tc.msgs, now, tc.hours)
			eq := func(name string, a, b *int64) {
				if (a == nil) != (b == nil) || a != nil && *a != *b {
					t.Errorf("%s = %v, want %v", name, deref(a), deref(b))
				}
			}
			if got.SampleSize != tc.want.n {
				t.Errorf("sample_size = %d, want %d", got.SampleSize, tc.want.n)
			}
			eq("avg", got.AvgSeconds, tc.want.avg)
			eq("median", got.MedianSeconds, tc.want.med)
			eq("min", got.MinSeconds, tc.want.min)
			eq("max", got.MaxSeconds, tc.want.max)
			if got.AvgHuman != tc.want.human {
				t.Errorf("avg_human = %q, want %q", got.AvgHuman, tc.want.human)
			}
			if got.TotalInbound != tc.want.in || got.TotalOutbound != tc.want.out {
				t.Errorf("totals in/out = %d/%d, want %d/%d", got.TotalInbound, got.TotalOutbound, tc.want.in, tc.want.out)
			}
			wantHours := tc.hours
			if wantHours == 0 {
				wantHours = DefaultHours
			}
			if got.Hours != wantHours {
				t.Errorf("hours = %v, want %v", got.Hours, wantHours)
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestResponseStatsUnsortedInput(t *testing.T) {
	// Two conversations of one person merged out of order.
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	msgs := conv(now.Add(-time.Hour), 0, "in", 10, "me")
	msgs[0], msgs[1] = msgs[1], msgs[0]
	got := ResponseStats(msgs, now, 24)
	if got.SampleSize != 1 || *got.AvgSeconds != 600 {
		t.Fatalf("got %d samples avg %v, want 1 sample of 600 s", got.SampleSize, deref(got.AvgSeconds))
	}
	if got.Samples[0].InboundID != msgs[1].ID || got.Samples[0].ReplyID != msgs[0].ID {
		t.Errorf("sample cites %s → %s", got.Samples[0].InboundID, got.Samples[0].ReplyID)
	}
}

func TestReplyTrackerBothSides(t *testing.T) {
	t0 := testclock.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var tr ReplyTracker
	var mine, theirs []int64
	for _, m := range conv(t0, 0, "me", 30, "in", 31, "in", 40, "me", 100, "in") {
		if a, b, ok := tr.Add(&m); ok {
			if a.ReplyID != "" {
				mine = append(mine, a.Seconds)
			}
			if b.ReplyID != "" {
				theirs = append(theirs, b.Seconds)
			}
		}
	}
	if len(mine) != 1 || mine[0] != 600 {
		t.Errorf("mine = %v, want [600]", mine)
	}
	if len(theirs) != 2 || theirs[0] != 1800 || theirs[1] != 3600 {
		t.Errorf("theirs = %v, want [1800 3600]", theirs)
	}
}
