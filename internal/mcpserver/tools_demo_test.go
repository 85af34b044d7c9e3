package mcpserver

import (
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// demoMessages is the size of the demo data set the tool tests use.
const demoMessages = 4000

func story(t *testing.T, env *servicetest.Env, id string) demo.Story {
	t.Helper()
	for _, s := range env.Stories {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no story %q", id)
	return demo.Story{}
}

// storyMessage returns a story line by its key. The demo's guids are
// fixed: the uppercase UUID form of sha1("tidings-demo/<story>/<key>").
func storyMessage(t *testing.T, s demo.Story, key string) demo.StoryMessage {
	t.Helper()
	h := sha1.Sum([]byte("tidings-demo/" + s.ID + "/" + key))
	b := h[:16]
	guid := strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
	for _, m := range s.Messages {
		if m.GUID == guid {
			return m
		}
	}
	t.Fatalf("story %s has no message %q", s.ID, key)
	return demo.StoryMessage{}
}

type msgOut struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversation_id"`
	Time           time.Time
	TS             string `json:"ts"`
	FromMe         bool   `json:"from_me"`
	Sender         string `json:"sender"`
	Kind           string `json:"kind"`
	Text           string `json:"text"`
	ReplyTo        string `json:"reply_to"`
	Reactions      []struct {
		Type   string `json:"type"`
		By     string `json:"by"`
		FromMe bool   `json:"from_me"`
	} `json:"reactions"`
	Edited bool `json:"edited"`
	Edits  []struct {
		Text string `json:"text"`
	} `json:"edits"`
	Unsent      bool `json:"unsent"`
	Attachments []struct {
		ID       string `json:"id"`
		Filename string `json:"filename"`
		MimeType string `json:"mime_type"`
	} `json:"attachments"`
	SendError *struct {
		Code int `json:"code"`
	} `json:"send_error"`
	GroupEvent *struct {
		Type      string `json:"type"`
		OtherName string `json:"other_name"`
		Title     string `json:"title"`
	} `json:"group_event"`
}

type pageOut struct {
	Conversations []struct {
		ID string `json:"id"`
	} `json:"conversations"`
	Contact             string   `json:"contact"`
	ResolvedSubstr      string   `json:"resolved_substr"`
	Messages            []msgOut `json:"messages"`
	More                bool     `json:"more"`
	NextCursor          string   `json:"next_cursor"`
	NextBeforeTimestamp string   `json:"next_before_timestamp"`
}

func TestMessageToolsOnDemoData(t *testing.T) {
	env := servicetest.Demo(t, demoMessages, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})
	sam := "iMessage;-;+14155550134"

	t.Run("list_conversations", func(t *testing.T) {
		var l struct {
			Count         int `json:"count"`
			Total         int `json:"total"`
			Conversations []struct {
				ID               string `json:"id"`
				Kind             string `json:"kind"`
				Label            string `json:"label"`
				ParticipantCount int    `json:"participant_count"`
				Participants     []struct {
					Handle, Name string
				} `json:"participants"`
				MessageCount int64     `json:"message_count"`
				LastActivity time.Time `json:"last_activity"`
			} `json:"conversations"`
			Page Page `json:"page"`
		}
		ok(t, cs, "list_conversations", nil, &l)
		if l.Count != 20 || len(l.Conversations) != 20 || l.Total <= 20 || !l.Page.Truncated || l.Page.NextCursor == "" {
			t.Fatalf("default listing: count %d, total %d, truncated %v, cursor %q", l.Count, l.Total, l.Page.Truncated, l.Page.NextCursor)
		}
		labels := map[string]bool{}
		for i, c := range l.Conversations {
			labels[c.Label] = true
			if i > 0 && c.LastActivity.After(l.Conversations[i-1].LastActivity) {
				t.Errorf("not ordered by newest activity at %d", i)
			}
			if len(c.Participants) > 10 || c.ParticipantCount < len(c.Participants) || c.MessageCount <= 0 || c.ID == "" {
				t.Errorf("conversation %+v", c)
			}
			if servicetest.Now.Sub(c.LastActivity) > 90*24*time.Hour {
				t.Errorf("%s is older than the 90-day window", c.ID)
			}
		}
		for _, want := range []string{"Marcus Webb", "Lisbon trip 🇵🇹", "Linda Morgan"} {
			if !labels[want] {
				t.Errorf("label %q not in %v", want, labels)
			}
		}
		// The cursor continues without overlap.
		var next struct {
			Conversations []struct {
				ID string `json:"id"`
			} `json:"conversations"`
		}
		ok(t, cs, "list_conversations", map[string]any{"cursor": l.Page.NextCursor, "limit": 5}, &next)
		for _, c := range next.Conversations {
			for _, prev := range l.Conversations {
				if c.ID == prev.ID {
					t.Errorf("%s repeated on the next page", c.ID)
				}
			}
		}
		if len(next.Conversations) != 5 {
			t.Errorf("next page has %d conversations", len(next.Conversations))
		}
	})

	t.Run("get_conversation_messages resolves every kind of reference", func(t *testing.T) {
		for _, ref := range []map[string]any{{"chat": "Sam"}, {"chat": "sam rivera"}, {"chat": "(415) 555-0134"}, {"chat": "4155550134"},
			{"chat": "+1 415 555 0134"}, {"chat": "sam.rivera@mail.example"}, {"conversation_id": sam}, {"chat": "+14155550134"}} {
			var pg pageOut
			ok(t, cs, "get_conversation_messages", ref, &pg)
			if !slices.ContainsFunc(pg.Conversations, func(c struct {
				ID string `json:"id"`
			}) bool {
				return c.ID == sam
			}) || len(pg.Messages) == 0 {
				t.Errorf("%v resolved to %+v", ref, pg.Conversations)
			}
		}
		msg := failsWith(t, cs, "get_conversation_messages", map[string]any{"chat": "Morgan"}, "matches", "Linda Morgan", "Robert Morgan", "ask the user")
		if strings.Contains(msg, "\n") {
			t.Errorf("multi-line error %q", msg)
		}
		failsWith(t, cs, "get_conversation_messages", map[string]any{"chat": "+1 212 555 0000"}, "no conversation with +1 212 555 0000")
		failsWith(t, cs, "get_conversation_messages", map[string]any{"chat": "Nobody Atall"}, "no contact or conversation matches")
		failsWith(t, cs, "get_conversation_messages", map[string]any{"chat": "Sam", "cursor": "garbage"}, "cursor is not valid")
	})

	t.Run("message details", func(t *testing.T) {
		all := readAll(t, cs, map[string]any{"chat": "Sam Rivera"}, 7)
		byID := map[string]msgOut{}
		for _, m := range all {
			byID[m.ID] = m
		}
		owes := story(t, env, "sam-owes-40")
		paid := byID[storyMessage(t, owes, "paid").GUID]
		if len(paid.Reactions) != 1 || paid.Reactions[0].Type != "love" || paid.Reactions[0].By != "me" {
			t.Errorf("reactions on the payment = %+v", paid.Reactions)
		}
		if paid.Sender != "Sam Rivera" || checkWrapped(t, "paid", paid.Text) == "" {
			t.Errorf("payment message %+v", paid)
		}
		failed := byID[storyMessage(t, story(t, env, "failed-send"), "late-failed").GUID]
		if failed.SendError == nil || !failed.FromMe {
			t.Errorf("failed send = %+v", failed)
		}
		dinner := readAll(t, cs, map[string]any{"chat": "Jordan"}, 50)
		th := story(t, env, "thursday-dinner")
		for _, m := range dinner {
			switch m.ID {
			case storyMessage(t, th, "booked").GUID:
				if !m.Edited || len(m.Edits) != 1 || !strings.Contains(m.Edits[0].Text, "7:30") || len(m.Reactions) != 1 || m.Reactions[0].Type != "like" {
					t.Errorf("edited booking = %+v", m)
				}
			case storyMessage(t, th, "bring").GUID:
				if m.ReplyTo != storyMessage(t, th, "book").GUID {
					t.Errorf("reply_to = %q", m.ReplyTo)
				}
			}
		}
		lisbon := readAll(t, cs, map[string]any{"chat": "Lisbon trip"}, 50)
		var events, unsent int
		for _, m := range lisbon {
			if m.GroupEvent != nil {
				events++
			}
			if m.Unsent {
				unsent++
				if m.Text != "" {
					t.Errorf("unsent message still has text %q", m.Text)
				}
			}
		}
		if events < 2 || unsent != 1 {
			t.Errorf("lisbon: %d group events, %d unsent", events, unsent)
		}
		var photo string
		for _, m := range readAll(t, cs, map[string]any{"chat": "Marcus"}, 50) {
			for _, a := range m.Attachments {
				if a.Filename == "IMG_4512.jpeg" {
					photo = a.ID
					if a.MimeType != "image/jpeg" {
						t.Errorf("photo mime %q", a.MimeType)
					}
				}
			}
		}
		if photo == "" {
			t.Fatal("landlord photo attachment not found")
		}
		var saved struct {
			Format string `json:"format"`
		}
		ok(t, cs, "save_attachment", map[string]any{"attachment_id": photo, "destination": filepath.Join(env.Files, "sink.jpeg")}, &saved)
		if b, err := os.ReadFile(filepath.Join(env.Files, "sink.jpeg")); err != nil || len(b) == 0 || saved.Format != "jpeg" {
			t.Errorf("saved photo: %v, format %q", err, saved.Format)
		}
	})

	t.Run("review_messages", func(t *testing.T) {
		var rv struct {
			Counts      map[string]int    `json:"counts"`
			NeedsReply  []json.RawMessage `json:"needs_reply"`
			SkipSummary []map[string]any  `json:"skip_summary"`
		}
		ok(t, cs, "review_messages", map[string]any{"days": 7}, &rv)
		pending := map[string]bool{}
		convs := map[string]bool{}
		for _, raw := range rv.NeedsReply {
			var e struct {
				ConversationID string   `json:"conversation_id"`
				Pending        []string `json:"pending"`
				Context        []struct {
					Text string `json:"text"`
				} `json:"context"`
			}
			json.Unmarshal(raw, &e)
			convs[e.ConversationID] = true
			for _, p := range e.Pending {
				pending[p] = true
			}
			if len(e.Context) == 0 {
				t.Errorf("needs_reply entry without context: %s", raw)
			}
		}
		for _, id := range []string{"landlord-sink", "mom-questions", "work-deadline"} {
			s := story(t, env, id)
			if !convs[s.Conversation] {
				t.Errorf("%s (%s) not in needs_reply", id, s.Conversation)
			}
			if !slices.ContainsFunc(s.Awaiting, func(g string) bool { return pending[g] }) {
				t.Errorf("%s: none of %v pending", id, s.Awaiting)
			}
		}
		if rv.Counts["needs_reply"] != len(rv.NeedsReply) || rv.Counts["total_messages"] == 0 {
			t.Errorf("counts %v", rv.Counts)
		}
		for _, s := range rv.SkipSummary {
			for _, k := range []string{"text", "last_text", "context"} {
				if _, has := s[k]; has {
					t.Errorf("skip_summary entry carries %s: %v", k, s)
				}
			}
		}
		failsWith(t, cs, "review_messages", map[string]any{"days": 91}, "days")
	})

	t.Run("get_response_stats", func(t *testing.T) {
		var st struct {
			SampleSize    int     `json:"sample_size"`
			AvgSeconds    *int64  `json:"avg_seconds"`
			AvgHuman      string  `json:"avg_human"`
			MedianSeconds *int64  `json:"median_seconds"`
			MinSeconds    *int64  `json:"min_seconds"`
			MaxSeconds    *int64  `json:"max_seconds"`
			Inbound       int     `json:"total_inbound_messages"`
			Outbound      int     `json:"total_outbound_messages"`
			Hours         float64 `json:"hours"`
			Resolved      string  `json:"resolved_substr"`
		}
		ok(t, cs, "get_response_stats", map[string]any{"chat": "Mom", "hours": 24 * 60}, &st)
		if st.SampleSize == 0 || st.AvgSeconds == nil || st.AvgHuman == "" || *st.MinSeconds > *st.MedianSeconds || *st.MedianSeconds > *st.MaxSeconds ||
			st.Inbound == 0 || st.Outbound == 0 || st.Resolved != "6175550192" || st.Hours != 1440 {
			t.Errorf("stats for Mom: %+v", st)
		}
		r := ok(t, cs, "get_response_stats", map[string]any{"chat": "Lukas", "hours": 1}, &st)
		if st.SampleSize != 0 || st.AvgSeconds != nil || !strings.Contains(r.text, `"avg_seconds":null`) {
			t.Errorf("no-sample stats must be null: %s", r.text)
		}
	})

	t.Run("lookup_contacts", func(t *testing.T) {
		var lk struct {
			MatchCount int  `json:"match_count"`
			Ambiguous  bool `json:"ambiguous"`
			Matches    []struct {
				Name        string `json:"name"`
				PhoneLast10 string `json:"phone_last10"`
				Email       string `json:"email"`
				ContactID   string `json:"contact_id"`
			} `json:"matches"`
		}
		ok(t, cs, "lookup_contacts", map[string]any{"name": "Morgan"}, &lk)
		if lk.MatchCount < 4 || lk.MatchCount > 25 || !lk.Ambiguous {
			t.Errorf("Morgan: %+v", lk)
		}
		for _, m := range lk.Matches {
			if (len(m.PhoneLast10) != 10) == (m.Email == "") || m.ContactID == "" {
				t.Errorf("match %+v: want phone_last10 or email", m)
			}
		}
		failsWith(t, cs, "lookup_contacts", map[string]any{"name": strings.Repeat("a", 101)}, "longer than")
	})

	t.Run("search_messages", func(t *testing.T) {
		s := story(t, env, "sam-owes-40")
		var sr struct {
			Hits []struct {
				MessageID    string `json:"message_id"`
				Sender       string `json:"sender"`
				Conversation struct {
					Label string `json:"label"`
				} `json:"conversation"`
				Before []any `json:"before"`
				After  []any `json:"after"`
			} `json:"hits"`
			ScanComplete *bool          `json:"scan_complete"`
			Coverage     map[string]any `json:"coverage"`
			Mode         string         `json:"mode"`
		}
		ok(t, cs, "search_messages", map[string]any{"query": "the money Sam owes me", "context": 2}, &sr)
		found := false
		for _, h := range sr.Hits {
			if slices.Contains(s.Facts[0].Evidence, h.MessageID) {
				found = true
				if h.Conversation.Label != "Sam Rivera" || len(h.Before)+len(h.After) == 0 {
					t.Errorf("hit %+v", h)
				}
			}
		}
		if !found || sr.ScanComplete == nil || sr.Coverage == nil || sr.Mode == "" {
			t.Errorf("search for Sam's debt: found %v, %+v", found, sr)
		}
		var scoped struct {
			Hits []struct {
				Conversation struct {
					ID string `json:"id"`
				} `json:"conversation"`
			} `json:"hits"`
		}
		ok(t, cs, "search_messages", map[string]any{"query": "dinner", "contact": "Jordan", "days": 30}, &scoped)
		for _, h := range scoped.Hits {
			if h.Conversation.ID != story(t, env, "thursday-dinner").Conversation {
				t.Errorf("contact filter let through %s", h.Conversation.ID)
			}
		}
		failsWith(t, cs, "search_messages", map[string]any{"query": "x", "mode": "magic"}, "")
		// A blank query browses (TestSearchWithoutQueryBrowses).
	})

	t.Run("get_contact_dossier", func(t *testing.T) {
		var d struct {
			ContactID string `json:"contact_id"`
			Stored    bool   `json:"stored"`
			Rebuilt   bool   `json:"rebuilt"`
			Messages  int    `json:"messages"`
			Resolved  []struct {
				Kind       string   `json:"kind"`
				Text       string   `json:"text"`
				Sources    []string `json:"sources"`
				ResolvedBy []string `json:"resolved_by"`
			} `json:"resolved_commitments"`
		}
		ok(t, cs, "get_contact_dossier", map[string]any{"contact_id": "Sam Rivera", "detail": "full"}, &d)
		if !d.Stored || !d.Rebuilt || d.Messages == 0 || d.ContactID == "" {
			t.Errorf("dossier %+v", d)
		}
		s := story(t, env, "sam-owes-40")
		paid := storyMessage(t, s, "paid").GUID
		debt := false
		for _, c := range d.Resolved {
			checkWrapped(t, "commitment", c.Text)
			if slices.Contains(c.ResolvedBy, paid) && len(c.Sources) > 0 {
				debt = true
			}
		}
		if !debt {
			t.Errorf("the $40 debt is not resolved by %s: %+v", paid, d.Resolved)
		}
		// The stored dossier is reused: the second call does not rebuild,
		// by contact id, phone or address alike.
		id := d.ContactID
		for _, ref := range []string{id, "+1 (415) 555-0134", "sam.rivera@mail.example"} {
			ok(t, cs, "get_contact_dossier", map[string]any{"contact_id": ref}, &d)
			if d.Rebuilt || d.ContactID != id {
				t.Errorf("%s: rebuilt %v, contact %s", ref, d.Rebuilt, d.ContactID)
			}
		}
		failsWith(t, cs, "get_contact_dossier", map[string]any{"contact_id": "Lisbon trip"}, "one person")
	})

	t.Run("results stay under 40 KB and say how to continue", func(t *testing.T) {
		// The busiest thread at the largest page does not fit: the newest
		// messages are kept and the cursor continues exactly before them.
		var l struct {
			Conversations []struct {
				ID           string `json:"id"`
				MessageCount int    `json:"message_count"`
			} `json:"conversations"`
		}
		ok(t, cs, "list_conversations", map[string]any{"limit": 200}, &l)
		busiest := l.Conversations[0]
		for _, c := range l.Conversations {
			if c.MessageCount > busiest.MessageCount {
				busiest = c
			}
		}
		var big struct {
			pageOut
			Page Page `json:"page"`
		}
		r := ok(t, cs, "get_conversation_messages", map[string]any{"conversation_id": busiest.ID, "limit": 200}, &big)
		if busiest.MessageCount <= 200 || (!big.Page.Truncated || big.NextCursor == "" || !big.More || big.Page.Note == "") {
			t.Errorf("%d messages at limit 200 in %d bytes: page %+v", busiest.MessageCount, len(r.raw), big.Page)
		}
		t.Logf("busiest: %d messages; limit 200 gave %d in %d bytes (truncated %v)", busiest.MessageCount, len(big.Messages), len(r.raw), big.Page.Truncated)
		all := readAll(t, cs, map[string]any{"conversation_id": busiest.ID}, 200)
		if len(all) != busiest.MessageCount {
			t.Errorf("paging with cuts read %d of %d messages", len(all), busiest.MessageCount)
		}
		// A search with full context cuts its hits and still pages on.
		var sr struct {
			Hits       []any  `json:"hits"`
			NextCursor string `json:"next_cursor"`
			Page       Page   `json:"page"`
		}
		r = ok(t, cs, "search_messages", map[string]any{"query": "the", "mode": "fulltext", "limit": 100, "context": 5}, &sr)
		if !sr.Page.Truncated || sr.NextCursor == "" || len(sr.Hits) == 100 {
			t.Errorf("search with context: %d hits in %d bytes, page %+v", len(sr.Hits), len(r.raw), sr.Page)
		}
		ok(t, cs, "search_messages", map[string]any{"query": "the", "mode": "fulltext", "limit": 100, "context": 5, "cursor": sr.NextCursor}, nil)
	})

	t.Run("get_status", func(t *testing.T) {
		var st StatusOutput
		ok(t, cs, "get_status", nil, &st)
		if st.Policy == nil || st.Policy.Mode != "blocklist" || st.Search == nil || !strings.HasPrefix(st.Search.Embedder, "builtin") ||
			len(st.SyncedSources) != 1 || st.SyncedSources[0].AgeSeconds == nil || st.Contacts == nil || !st.Contacts.Configured || st.Dossiers == nil {
			t.Errorf("status: policy %+v search %+v sources %+v contacts %+v", st.Policy, st.Search, st.SyncedSources, st.Contacts)
		}
	})
}

// readAll pages through a conversation with the given page size and
// checks that the pages join up: chronological, no message twice.
func readAll(t *testing.T, cs *mcp.ClientSession, ref map[string]any, limit int) []msgOut {
	t.Helper()
	var all []msgOut
	seen := map[string]bool{}
	cursor := ""
	for range 1000 {
		args := map[string]any{"limit": limit}
		for k, v := range ref {
			args[k] = v
		}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var pg pageOut
		ok(t, cs, "get_conversation_messages", args, &pg)
		if len(pg.Messages) > limit {
			t.Fatalf("page of %d messages with limit %d", len(pg.Messages), limit)
		}
		for i, m := range pg.Messages {
			if seen[m.ID] {
				t.Fatalf("message %s on two pages", m.ID)
			}
			seen[m.ID] = true
			tm, err := time.Parse(time.RFC3339, m.TS)
			if err != nil {
				t.Fatal(err)
			}
			pg.Messages[i].Time = tm
			if i > 0 && tm.Before(pg.Messages[i-1].Time) {
				t.Fatalf("page not chronological at %s", m.ID)
			}
		}
		if len(all) > 0 && len(pg.Messages) > 0 && pg.Messages[len(pg.Messages)-1].Time.After(all[0].Time) {
			t.Fatalf("an older page holds a newer message")
		}
		all = append(pg.Messages, all...)
		if !pg.More {
			return all
		}
		if pg.NextCursor == "" || pg.NextBeforeTimestamp == "" {
			t.Fatal("more messages but no cursor")
		}
		cursor = pg.NextCursor
	}
	t.Fatal("paging does not end")
	return nil
}
