package mcpserver

import (
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service/servicetest"
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
