package mcpserver

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/service/servicetest"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// voiceOut is a message or hit as far as voice notes, read state and send
// state go (docs/tools.md).
type voiceOut struct {
	ID             string `json:"id"`
	MessageID      string `json:"message_id"`
	Text           string `json:"text"`
	Transcript     string `json:"transcript"`
	TranscriptNote string `json:"transcript_note"`
	IsRead         *bool  `json:"is_read"`
	FromMe         bool   `json:"from_me"`
	TS             string `json:"ts"`
	SendError      *struct {
		Code int    `json:"code"`
		Note string `json:"note"`
	} `json:"send_error"`
}

func (v voiceOut) id() string { return v.ID + v.MessageID }

// TestVoiceNoteTranscriptsReachTheModel: Apple's transcript of a voice
// note is a wrapped field of the message in history and in search hits, is
// found by search, and audio without one says so.
func TestVoiceNoteTranscriptsReachTheModel(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	st := story(t, env, "mom-voice")
	voice, silent := storyMessage(t, st, "voice").GUID, storyMessage(t, st, "voice2").GUID

	var pg struct {
		Messages []voiceOut `json:"messages"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Mom", "limit": 200}, &pg)
	found := map[string]voiceOut{}
	for _, m := range pg.Messages {
		found[m.id()] = m
	}
	v, ok1 := found[voice]
	if !ok1 || !strings.Contains(checkWrapped(t, "transcript", v.Transcript), "lemon tart") || v.TranscriptNote != "" {
		t.Errorf("voice note in history = %+v", v)
	}
	if s, ok2 := found[silent]; !ok2 || s.Transcript != "" || s.TranscriptNote != "no transcript" {
		t.Errorf("voice note without a transcript = %+v", s)
	}

	var sr struct {
		Hits []voiceOut `json:"hits"`
	}
	ok(t, cs, "search_messages", map[string]any{"query": "lemon tart Aunt Carol", "mode": "fulltext"}, &sr)
	if len(sr.Hits) == 0 || sr.Hits[0].id() != voice || !strings.Contains(checkWrapped(t, "hit transcript", sr.Hits[0].Transcript), "Aunt Carol") {
		t.Errorf("search for the transcript = %+v", sr.Hits)
	}
}

// TestVoiceNoteTranscriptInReview: review_messages' context carries the
// transcript too, wrapped.
func TestVoiceNoteTranscriptInReview(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	voice := storyMessage(t, story(t, env, "mom-voice"), "voice").GUID
	var rv struct {
		NeedsReply  []struct{ Context []voiceOut } `json:"needs_reply"`
		LowPriority []struct{ Context []voiceOut } `json:"low_priority"`
	}
	ok(t, cs, "review_messages", map[string]any{"days": 7}, &rv)
	var got *voiceOut
	for _, l := range [][]struct{ Context []voiceOut }{rv.NeedsReply, rv.LowPriority} {
		for _, th := range l {
			for i, c := range th.Context {
				if c.ID == voice {
					got = &th.Context[i]
				}
			}
		}
	}
	if got == nil || !strings.Contains(checkWrapped(t, "review transcript", got.Transcript), "lemon tart") {
		t.Errorf("voice note in review = %+v", got)
	}
}

// TestUnreadIsExact: is_read is on every incoming message and on no
// outgoing one; unread_only keeps exactly the demo's unread messages
// (history), the conversations holding them (list_conversations) and the
// threads holding them (review_messages).
func TestUnreadIsExact(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	guid := func(st, key string) string { return storyMessage(t, story(t, env, st), key).GUID }

	var all struct {
		Messages []voiceOut `json:"messages"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Mom", "limit": 200}, &all)
	for _, m := range all.Messages {
		if m.FromMe != (m.IsRead == nil) {
			t.Errorf("message %s (from_me %v): is_read %v", m.ID, m.FromMe, m.IsRead)
		}
	}
	var un struct {
		Messages []voiceOut `json:"messages"`
		More     bool       `json:"more"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Mom", "unread_only": true}, &un)
	var got []string
	for _, m := range un.Messages {
		got = append(got, m.ID)
		if m.IsRead == nil || *m.IsRead {
			t.Errorf("unread_only returned %+v", m)
		}
	}
	if want := []string{guid("mom-voice", "voice"), guid("mom-questions", "call")}; strings.Join(got, ",") != strings.Join(want, ",") || un.More {
		t.Errorf("Mom's unread messages = %v (more %v), want %v", got, un.More, want)
	}

	var l struct {
		Conversations []struct {
			Label       string `json:"label"`
			UnreadCount int    `json:"unread_count"`
		} `json:"conversations"`
	}
	ok(t, cs, "list_conversations", map[string]any{"unread_only": true}, &l)
	counts := map[string]int{}
	for _, c := range l.Conversations {
		counts[c.Label] = c.UnreadCount
	}
	want := map[string]int{"Linda Morgan": 2, "Marcus Webb": 1, "Priya Shah": 1}
	for label, n := range want {
		if counts[label] != n {
			t.Errorf("unread %s = %d, want %d (all: %v)", label, counts[label], n, counts)
		}
	}
	if len(counts) != 4 { // and the verification code's sender
		t.Errorf("conversations with unread messages: %v", counts)
	}

	var rv struct {
		NeedsReply  []struct{ Label string } `json:"needs_reply"`
		LowPriority []struct{ Label string } `json:"low_priority"`
		SkipSummary []struct{ Label string } `json:"skip_summary"`
	}
	ok(t, cs, "review_messages", map[string]any{"days": 7, "unread_only": true}, &rv)
	n := len(rv.NeedsReply) + len(rv.LowPriority) + len(rv.SkipSummary)
	for _, l := range [][]struct{ Label string }{rv.NeedsReply, rv.LowPriority, rv.SkipSummary} {
		for _, th := range l {
			if _, ok := counts[th.Label]; !ok {
				t.Errorf("review unread_only lists %q, which has nothing unread", th.Label)
			}
		}
	}
	if n != len(counts) {
		t.Errorf("review unread_only lists %d threads, want %d", n, len(counts))
	}
}

// TestExplicitDatesAreExact: date_from/date_to keep exactly the messages
// in range — bounds inclusive to the millisecond, a date-only value a day
// in the user's zone (PST in the demo, not the clock's UTC), a date-only
// date_to the whole day — in history and in search; bad values and a
// reversed range are one-sentence errors naming the parameter.
func TestExplicitDatesAreExact(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	all := readAll(t, cs, map[string]any{"chat": "Mom"}, 200)
	mom := story(t, env, "mom-questions")
	pkg, scarf := storyMessage(t, mom, "package").Time, storyMessage(t, mom, "scarf").Time // Nov 21 19:00 and 21:15 PST
	between := func(from, to time.Time) []string {
		var ids []string
		for _, m := range all {
			if !m.Time.Before(from) && !m.Time.After(to) {
				ids = append(ids, m.ID)
			}
		}
		return ids
	}
	// The demo's days move with the test dates (docs/testing.md), so every
	// day named here comes from testclock.
	day := func(y, m, d int) time.Time { return testclock.Date(y, time.Month(m), d, 0, 0, 0, 0, servicetest.Zone) }
	date := func(y, m, d int) string { return day(y, m, d).Format(time.DateOnly) }
	ms := time.Millisecond
	tests := []struct {
		name     string
		from, to string
		want     []string
	}{
		{"date-only values are whole days in the user's zone", date(2026, 11, 21), date(2026, 11, 21), between(day(2026, 11, 21), day(2026, 11, 22).Add(-ms))},
		{"bounds at a message's instant include it", pkg.Format(time.RFC3339Nano), scarf.Format(time.RFC3339Nano), between(pkg, scarf)},
		{"a millisecond past either end leaves it out", pkg.Add(ms).Format(time.RFC3339Nano), scarf.Add(-ms).Format(time.RFC3339Nano), between(pkg.Add(ms), scarf.Add(-ms))},
		{"only date_to", "", date(2026, 11, 9), between(time.Time{}, day(2026, 11, 10).Add(-ms))},
		{"only date_from", date(2026, 11, 29), "", between(day(2026, 11, 29), day(2100, 1, 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"chat": "Mom", "limit": 200}
			if tc.from != "" {
				args["date_from"] = tc.from
			}
			if tc.to != "" {
				args["date_to"] = tc.to
			}
			var got []string
			for _, m := range readAll(t, cs, args, 200) {
				got = append(got, m.ID)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %d messages %v, want %d %v", len(got), got, len(tc.want), tc.want)
			}
		})
	}
	if n := len(between(pkg, scarf)); n != 2 {
		t.Fatalf("the fixture has %d messages from the package question to the scarf answer, want those two", n)
	}
	if inDay := between(day(2026, 11, 21), day(2026, 11, 22).Add(-ms)); !slices.Contains(inDay, storyMessage(t, mom, "scarf").GUID) {
		t.Fatal("the fixture no longer has a late-evening message on 2026-11-21 (PST), which UTC would put on the 22nd")
	}

	// search_messages: the transcript of the 24th's voice note is found
	// with that day, not with the day before.
	voice := storyMessage(t, story(t, env, "mom-voice"), "voice").GUID
	at1215 := day(2026, 11, 24).Add(12*time.Hour + 15*time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		from, to string
		found    bool
	}{{date(2026, 11, 24), date(2026, 11, 24), true}, {date(2026, 11, 23), date(2026, 11, 23), false}, {at1215, at1215, true},
		{day(2026, 11, 24).Add(12*time.Hour + 15*time.Minute + ms).Format(time.RFC3339Nano), "", false},
		{"", day(2026, 11, 24).Add(12*time.Hour + 15*time.Minute - ms).Format(time.RFC3339Nano), false}} {
		var sr struct {
			Hits []voiceOut `json:"hits"`
		}
		ok(t, cs, "search_messages", map[string]any{"query": "lemon tart Aunt Carol", "mode": "fulltext", "date_from": tc.from, "date_to": tc.to}, &sr)
		found := slices.ContainsFunc(sr.Hits, func(h voiceOut) bool { return h.MessageID == voice })
		for _, h := range sr.Hits {
			ts, _ := time.Parse(time.RFC3339, h.TS)
			if tc.from != "" && ts.Before(day(2026, 11, 24)) || tc.to == date(2026, 11, 23) {
				t.Errorf("%s..%s: hit at %s", tc.from, tc.to, h.TS)
			}
		}
		if found != tc.found {
			t.Errorf("search %s..%s: voice note found %v, want %v", tc.from, tc.to, found, tc.found)
		}
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_conversation_messages", map[string]any{"chat": "Mom", "date_from": "yesterday"}, "date_from must be an ISO-8601 date"},
		{"get_conversation_messages", map[string]any{"chat": "Mom", "date_to": "2026-13-01"}, "date_to must be an ISO-8601 date"},
		{"get_conversation_messages", map[string]any{"chat": "Mom", "date_from": "2026-11-25", "date_to": "2026-11-24"}, "date_from must not be after date_to"},
		{"search_messages", map[string]any{"query": "tart", "date_to": "soon"}, "date_to must be an ISO-8601 date"},
		{"search_messages", map[string]any{"query": "tart", "date_from": "2026-11-25T09:00:00Z", "date_to": "2026-11-24"}, "date_from must not be after date_to"},
	} {
		if msg := failsWith(t, cs, tc.tool, tc.args, tc.want); strings.Contains(msg, "\n") {
			t.Errorf("multi-line error %q", msg)
		}
	}
}

// TestSearchHitsCarrySendAndReadState: a failed send reads differently in
// search hits too (send_error), and incoming hits carry is_read.
func TestSearchHitsCarrySendAndReadState(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	fs := story(t, env, "failed-send")
	failed, resent := storyMessage(t, fs, "late-failed").GUID, storyMessage(t, fs, "late").GUID
	var sr struct {
		Hits []voiceOut `json:"hits"`
	}
	ok(t, cs, "search_messages", map[string]any{"query": "running 10 min late", "mode": "fulltext", "contact": "Sam"}, &sr)
	seen := map[string]voiceOut{}
	for _, h := range sr.Hits {
		seen[h.MessageID] = h
		if h.FromMe != (h.IsRead == nil) {
			t.Errorf("hit %s (from_me %v): is_read %v", h.MessageID, h.FromMe, h.IsRead)
		}
	}
	if h, ok := seen[failed]; !ok || h.SendError == nil || h.SendError.Code == 0 || !strings.Contains(h.SendError.Note, "not delivered") {
		t.Errorf("failed send in hits = %+v", h)
	}
	if h, ok := seen[resent]; !ok || h.SendError != nil {
		t.Errorf("the resend in hits = %+v", h)
	}
	var un struct {
		Hits []voiceOut `json:"hits"`
	}
	ok(t, cs, "search_messages", map[string]any{"query": "lemon tart", "mode": "fulltext", "contact": "Mom"}, &un)
	voice := storyMessage(t, story(t, env, "mom-voice"), "voice").GUID
	if i := slices.IndexFunc(un.Hits, func(h voiceOut) bool { return h.MessageID == voice }); i < 0 || un.Hits[i].IsRead == nil || *un.Hits[i].IsRead {
		t.Errorf("the unread voice note in hits: %+v", un.Hits)
	}
}

// TestSearchWithoutQueryBrowses: search_messages without a query lists
// the searchable messages its filters allow, newest first, capped by
// limit, with scan_complete — the messages with text (or a transcript)
// that history shows in that range.
func TestSearchWithoutQueryBrowses(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	var br struct {
		Hits         []voiceOut `json:"hits"`
		ScanComplete *bool      `json:"scan_complete"`
		NextCursor   string     `json:"next_cursor"`
	}
	day := testclock.Date(2026, 11, 24, 0, 0, 0, 0, servicetest.Zone).Format(time.DateOnly) // the demo's days move with the test dates
	ok(t, cs, "search_messages", map[string]any{"contact": "Mom", "date_from": day, "date_to": day, "limit": 100}, &br)
	var want []string
	var pg struct {
		Messages []voiceOut `json:"messages"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Mom", "date_from": day, "date_to": day, "limit": 200}, &pg)
	for _, m := range pg.Messages {
		if m.Text != "" || m.Transcript != "" {
			want = append(want, m.ID)
		}
	}
	slices.Reverse(want)
	var got []string
	for _, h := range br.Hits {
		got = append(got, h.MessageID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) < 2 || br.ScanComplete == nil || !*br.ScanComplete {
		t.Errorf("browse = %v (scan_complete %v), want newest first %v", got, br.ScanComplete, want)
	}
	// Capped by limit, continued by the cursor.
	var first struct {
		Hits       []voiceOut `json:"hits"`
		NextCursor string     `json:"next_cursor"`
	}
	ok(t, cs, "search_messages", map[string]any{"contact": "Mom", "date_from": day, "date_to": day, "limit": 1}, &first)
	if len(first.Hits) != 1 || first.Hits[0].MessageID != want[0] || first.NextCursor == "" {
		t.Errorf("first page = %+v", first)
	}
}
