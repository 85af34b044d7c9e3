package service

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/triage"
)

// reviewContextBefore is how many messages before the window a thread
// brings as context for the classifier (an ask just before the window
// still matters).
const reviewContextBefore = 10

// reviewMaxMessages bounds the messages one review reads.
const reviewMaxMessages = 20000

// ReviewParams are review_messages' arguments.
type ReviewParams struct {
	// Days is the window, (0, MaxReviewDays]; 0 means DefaultReviewDays.
	Days float64
	// Context is the number of context messages per thread (0: 5).
	Context int
	// UnreadOnly reviews only the threads with an unread incoming message
	// in the window.
	UnreadOnly bool
}

// The review's types are triage's (internal/triage): the service returns
// its report with every text through the output boundary.

// ReviewContext is one context message of a review entry (the bridge protocol's
// ts, me, text, plus the id).
type ReviewContext = triage.ContextMessage

// ReviewThread is a needs_reply or low_priority entry: the bridge protocol's
// fields, then the conversation id get_conversation_messages takes and the
// classifier's explanation (reasons quote no message text).
type ReviewThread = triage.Entry

// ReviewSkip is a skipped thread: no text, as docs/bridge.md requires.
type ReviewSkip = triage.SkipEntry

// ReviewCounts are the bridge protocol's counts.
type ReviewCounts = triage.Counts

// Review is review_messages' result (the bridge protocol's review response).
type Review struct {
	triage.Report
	// Complete is false when the window held more messages than one review
	// reads (the newest were reviewed); Note says so.
	Complete bool   `json:"complete"`
	Note     string `json:"note,omitempty"`
}

// Review triages the threads active in the last Days days into
// needs_reply, low_priority and skip (internal/triage), with context
// messages for the first two and no text for skipped threads.
func (s *Service) Review(ctx context.Context, prm ReviewParams) (Review, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return Review{}, err
	}
	days := prm.Days
	switch {
	case days == 0:
		days = DefaultReviewDays
	case days < 0 || days > MaxReviewDays:
		return Review{}, userErr("days must be greater than 0 and at most %d", MaxReviewDays)
	}
	now := s.now()
	since := now.Add(-time.Duration(days * float64(24*time.Hour)))
	threads, raw, complete, err := s.recentThreads(ctx, p, since, now, prm.UnreadOnly)
	if err != nil {
		return Review{}, err
	}
	rep := triage.Review(threads, triage.ReviewOptions{Options: triage.Options{Now: now, Region: s.region}, Days: days, Context: prm.Context})
	for i, e := range rep.NeedsReply {
		rep.NeedsReply[i] = s.reviewThread(e, raw)
	}
	for i, e := range rep.LowPriority {
		rep.LowPriority[i] = s.reviewThread(e, raw)
	}
	for i := range rep.SkipSummary {
		e := &rep.SkipSummary[i]
		e.ChatID, e.Label, e.LastTime = output.Name(e.ChatID), output.Name(e.Label), s.ts(e.LastTime)
	}
	out := Review{Report: rep, Complete: complete}
	if !complete {
		out.Note = fmt.Sprintf("the window holds more than %d messages; the newest %d were reviewed", reviewMaxMessages, reviewMaxMessages)
	}
	return out, nil
}

// rawMessages keeps the index messages a review read, so output texts are
// redacted from the full original (with its one-time-code runs), never
// from the classifier's clipped copies.
type rawMessages struct {
	byID   map[string]index.Message
	convOf map[string]string // chat_id → conversation id
}

// recentThreads builds the classifier's threads: every visible
// conversation with a message in [since, now], with up to
// reviewContextBefore earlier messages. One thread per chat id (a person's
// SMS and iMessage threads are one conversation to them).
//
// unreadOnly keeps the threads with an unread incoming message in the
// window.
func (s *Service) recentThreads(ctx context.Context, p *policy.Policy, since, now time.Time, unreadOnly bool) ([]triage.Thread, rawMessages, bool, error) {
	raw := rawMessages{byID: map[string]index.Message{}, convOf: map[string]string{}}
	w, err := s.ix.MessagesInWindow(ctx, index.WindowQuery{Since: since, Until: now.Add(time.Millisecond), Limit: reviewMaxMessages})
	if err != nil {
		return nil, raw, false, indexErr("read recent messages", err)
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return nil, raw, false, err
	}
	type group struct {
		convs map[string]index.Conversation
		msgs  []index.Message
		last  time.Time
	}
	groups := map[string]*group{}
	convCache := map[string]*index.Conversation{}
	convOf := func(id string) *index.Conversation {
		if c, ok := convCache[id]; ok {
			return c
		}
		c, err := s.ix.Conversation(ctx, id)
		if err != nil || !allowConv(p, c) {
			convCache[id] = nil
			return nil
		}
		convCache[id] = &c
		return &c
	}
	a := newAuthors(p)
	for _, m := range a.filter(w.Messages) {
		c := convOf(m.Conversation.ID)
		if c == nil {
			continue
		}
		g := groups[c.Identifier]
		if g == nil {
			g = &group{convs: map[string]index.Conversation{}}
			groups[c.Identifier] = g
		}
		g.convs[c.ID] = *c
		g.msgs = append(g.msgs, m)
		if m.Time.After(g.last) {
			g.last = m.Time
			raw.convOf[c.Identifier] = c.ID
		}
	}
	var threads []triage.Thread
	for chatID, g := range groups {
		if unreadOnly && !slices.ContainsFunc(g.msgs, func(m index.Message) bool { return incoming(m) && !m.IsRead }) {
			continue
		}
		// Context before the window, from every conversation of the chat.
		seen := map[string]bool{}
		for _, m := range g.msgs {
			seen[m.ID] = true
		}
		for id := range g.convs {
			h, err := s.ix.History(ctx, index.HistoryQuery{Chat: id, Before: since, Limit: reviewContextBefore})
			if err != nil {
				return nil, raw, false, indexErr("read context", err)
			}
			for _, m := range a.filter(h.Messages) {
				if !seen[m.ID] {
					seen[m.ID] = true
					g.msgs = append(g.msgs, m)
				}
			}
		}
		sort.SliceStable(g.msgs, func(i, j int) bool { return g.msgs[i].Time.Before(g.msgs[j].Time) })
		c := g.convs[raw.convOf[chatID]]
		threads = append(threads, s.triageThread(c, g.msgs, book))
		for _, m := range g.msgs {
			raw.byID[m.ID] = m
		}
	}
	sort.Slice(threads, func(i, j int) bool { return threads[i].ChatID < threads[j].ChatID })
	return threads, raw, !w.Truncated, nil
}

// triageThread converts a conversation and its messages for the
// classifier. Texts are the originals: classification needs the real
// words; what leaves is redacted later from raw.
//
// Participant names and handles reach the classifier's reasons unquoted,
// so their quotation marks are replaced first (noQuote; contact_name shows
// ” for "): reviewThread removes the quoted message excerpts by their
// quotation marks, and a contact named `Bo "the Boss` made it pair the
// name's mark with an excerpt's opening one and leave the excerpt —
// unredacted — in the reason.
func (s *Service) triageThread(c index.Conversation, msgs []index.Message, book *contacts.Book) triage.Thread {
	t := triage.Thread{ChatID: c.Identifier, Label: s.label(c, book), DisplayName: c.DisplayName, ConversationID: c.ID, Kind: c.Kind, ParticipantCount: c.ParticipantCount}
	for _, pt := range c.Participants {
		t.Participants = append(t.Participants, triage.Participant{Handle: noQuote(pt.Handle), Name: noQuote(s.nameOf(pt.Handle, pt.Name, book))})
	}
	if c.Kind != model.KindGroup && len(t.Participants) > 0 {
		t.ContactName = t.Participants[0].Name
		t.Known = t.ContactName != ""
		_, kind := contacts.Normalize(c.Participants[0].Handle, s.region)
		t.SenderKind = kind
	}
	for _, m := range msgs {
		tm := triage.Message{ID: m.ID, Time: m.Time, FromMe: m.FromMe, Sender: noQuote(m.Sender), Kind: m.Kind, Text: m.Text, Error: m.Error,
			Unsent: m.Unsent, ReplyTo: m.ReplyTo, Runs: m.Runs, Attachments: len(m.Attachments)}
		for _, r := range m.Reactions {
			tm.Reactions = append(tm.Reactions, triage.Reaction{FromMe: r.FromMe, Sender: noQuote(r.Sender), Type: r.Type, Time: r.Time})
		}
		t.Messages = append(t.Messages, tm)
	}
	return t
}

// quoted matches the Go-quoted message excerpts in classifier reasons.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// noQuote replaces the quotation marks of a name or handle given to the
// classifier, so the only ones in its reasons delimit excerpts.
func noQuote(s string) string { return strings.ReplaceAll(s, `"`, "\u201d") }

// reviewThread converts a triage entry: texts come from the raw messages
// through the output boundary; reasons lose their quotes (a clipped quote
// could cut a secret where the redactor no longer sees it).
func (s *Service) reviewThread(e triage.Entry, raw rawMessages) ReviewThread {
	rt := e
	rt.ChatID, rt.Label, rt.ContactName, rt.DisplayName = output.Name(e.ChatID), output.Name(e.Label), output.Name(e.ContactName), output.Name(e.DisplayName)
	rt.LastTime, rt.Context, rt.Reasons = s.ts(e.LastTime), []ReviewContext{}, []string{}
	for _, c := range e.Context {
		rc := ReviewContext{ID: c.ID, Time: s.ts(c.Time), Me: c.Me, Text: s.reviewText(c.ID, c.Text, raw)}
		if m, ok := raw.byID[c.ID]; ok {
			rc.Transcript, rc.TranscriptNote = s.transcript(m.Runs, m.Attachments)
		}
		rt.Context = append(rt.Context, rc)
	}
	if n := len(rt.Context); n > 0 {
		rt.LastText = rt.Context[n-1].Text
	} else {
		rt.LastText, _ = s.body(e.LastText, nil)
	}
	for _, r := range e.Reasons {
		// Redacted as well: a reason must never be the one place a secret
		// leaves unmasked, whatever the classifier puts in it.
		rt.Reasons = append(rt.Reasons, output.Name(quoted.ReplaceAllString(r, "“…”")))
	}
	return rt
}

// reviewText is a context message's text: the classifier's display form
// ("[attachment]", "[unsent]", "[not delivered] …") rebuilt from the raw
// message through the boundary.
func (s *Service) reviewText(id, display string, raw rawMessages) string {
	m, ok := raw.byID[id]
	if !ok {
		t, _ := s.body(display, nil)
		return t
	}
	if m.Unsent {
		return "[unsent]"
	}
	txt, _ := s.body(m.Text, m.Runs)
	txt = strings.TrimSpace(strings.ReplaceAll(txt, "\ufffc", "[attachment]"))
	if txt == "" && len(m.Attachments) > 0 {
		txt = "[attachment]"
	}
	if m.FromMe && m.Error != 0 {
		txt = "[not delivered] " + txt
	}
	return txt
}
