package triage

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
)

// Bucket is a triage outcome, named as in the bridge protocol's review
// response (docs/bridge.md, docs/triage.md).
type Bucket string

// Buckets, from most to least urgent.
const (
	// NeedsReply: someone is waiting on the owner — an unanswered question
	// or request addressed to them, a failed send, a promised follow-up.
	NeedsReply Bucket = "needs_reply"
	// LowPriority: new human content without a pending ask (news, group
	// chatter not addressed to the owner, links from friends), or an ask so
	// old it was probably settled elsewhere.
	LowPriority Bucket = "low_priority"
	// Skip: nothing to read or do — automated senders (codes, deliveries,
	// banks, marketing), threads the owner answered last, conversations that
	// ended in an acknowledgement or a tapback.
	Skip Bucket = "skip"
)

// Buckets lists the buckets in the bridge protocol's order.
var Buckets = []Bucket{NeedsReply, LowPriority, Skip}

// Defaults and bounds of the review window (the bridge protocol's days
// parameter) and of staleness.
const (
	DefaultDays = 2
	MaxDays     = 90 // the bridge protocol's cap; (0, 90]
	// DefaultStaleAfter is how long an unanswered ask stays needs_reply;
	// after a week it has usually been settled by a call or in person.
	DefaultStaleAfter = 7 * 24 * time.Hour
)

// Participant is another member of a thread (the owner is never listed).
type Participant struct {
	Handle string `json:"handle"`
	// Name is the contact name, "" when the handle is not in contacts.
	Name string `json:"name,omitempty"`
}

// Thread is one conversation as the classifier sees it.
type Thread struct {
	// ChatID is the bridge protocol's chat_id (handle of a direct chat, "chat…"
	// for a group); Label, ContactName and DisplayName are passed through to
	// the review entries.
	ChatID      string `json:"chat_id"`
	Label       string `json:"label,omitempty"`
	ContactName string `json:"contact_name,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	// ConversationID is the caller's id for the thread (the service's
	// conversation id, which get_conversation_messages takes), passed
	// through to the review entries like Label.
	ConversationID string `json:"conversation_id,omitempty"`

	Kind model.ConversationKind `json:"kind"`
	// Participants are the other members (at most 10 suffice);
	// ParticipantCount is their full count (0: len(Participants)).
	Participants     []Participant `json:"participants,omitempty"`
	ParticipantCount int           `json:"participant_count,omitempty"`
	// Known is true when the other party of a direct chat is in the
	// owner's contacts.
	Known bool `json:"known,omitempty"`
	// SenderKind is the kind of the other party's handle in a direct chat
	// (contacts.Normalize); empty means: derive it from Participants[0].
	SenderKind contacts.Kind `json:"sender_kind,omitempty"`
	// Messages are the thread's recent messages, oldest first.
	Messages []Message `json:"messages"`
}

// Message is one message of a thread. It carries what triage reads from
// index.Message / model.Message.
type Message struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	FromMe bool      `json:"from_me,omitempty"`
	// Sender is the sender's handle; empty when FromMe.
	Sender string            `json:"sender,omitempty"`
	Kind   model.MessageKind `json:"kind,omitempty"` // "" means text
	Text   string            `json:"text,omitempty"`
	// Error is the send error code of an outgoing message; non-zero means
	// the send failed.
	Error  int  `json:"error,omitempty"`
	Unsent bool `json:"unsent,omitempty"`
	// ReplyTo is the id of the message this one answers inline.
	ReplyTo string `json:"reply_to,omitempty"`
	// Runs carry mentions (Run.Mention), links and one-time codes.
	Runs        []model.Run `json:"runs,omitempty"`
	Attachments int         `json:"attachments,omitempty"`
	// Reactions are the current tapbacks on this message.
	Reactions []Reaction `json:"reactions,omitempty"`
	// Reaction is set when the message itself is a reaction row (Kind
	// "reaction"), as sources deliver them before the index folds them.
	Reaction *model.Reaction `json:"reaction,omitempty"`
}

// Reaction is a tapback on a message.
type Reaction struct {
	FromMe bool               `json:"from_me,omitempty"`
	Sender string             `json:"sender,omitempty"`
	Type   model.ReactionType `json:"type"`
	Time   time.Time          `json:"time"`
}

// Owner identifies the person whose messages these are, so mentions and
// names addressed to them can be recognised in groups.
type Owner struct {
	// Handles are the owner's own phone numbers and addresses; a Run.Mention
	// equal to one (after normalisation) addresses the owner. When empty, a
	// mention of a handle that is none of the group's other members is
	// taken to be the owner (the participant list never includes them).
	Handles []string
	// Names are the owner's first name and nicknames ("Alex").
	Names []string
}

// Options configure Classify.
type Options struct {
	// Now is the moment of the review (required: the package has no clock).
	Now   time.Time
	Owner Owner
	// StaleAfter is how long an unanswered ask stays needs_reply
	// (0: DefaultStaleAfter).
	StaleAfter time.Duration
	// Region normalises handles (contacts.Normalize; "" = US).
	Region string

	ownerKeys []string // Owner.Handles normalised once by ClassifyAll
}

// normOwner normalises the owner's handles; never nil.
func normOwner(opts Options) []string {
	keys := make([]string, 0, len(opts.Owner.Handles))
	for _, h := range opts.Owner.Handles {
		keys = append(keys, normHandle(h, opts.Region))
	}
	return keys
}

// Code names the main reason of a decision without quoting any message,
// so it may appear where message text must not (skip_summary).
type Code string

// Decision codes.
const (
	CodeEmpty        Code = "empty"           // no messages (or only reactions)
	CodeAutomated    Code = "automated"       // machine sender: code, delivery, bank, marketing, reminder, link spam
	CodeAlert        Code = "automated_alert" // automated alert that asks to confirm account activity
	CodeFailedSend   Code = "failed_send"     // the owner's message failed and was not sent again
	CodeAsk          Code = "unanswered_ask"  // a question or request addressed to the owner is open
	CodeFollowUp     Code = "promised_follow_up"
	CodeStale        Code = "stale_ask"     // an ask older than StaleAfter
	CodeRepliedLast  Code = "replied_last"  // the owner spoke last
	CodeAcknowledged Code = "acknowledged"  // ended with "ok"/"thanks"/a tapback, or the ask was withdrawn
	CodeGroup        Code = "group_chatter" // group messages not addressed to the owner
	CodeMention      Code = "mentioned"     // mentioned in a group without an ask
	CodeNew          Code = "new_message"   // news or a statement, nothing asked
	CodeOld          Code = "old_message"   // a statement older than StaleAfter
)

// Decision is the classifier's verdict on one thread.
type Decision struct {
	Bucket Bucket `json:"bucket"`
	Code   Code   `json:"code"`
	// Score orders threads within a bucket, 0–1: higher is more urgent.
	Score float64 `json:"score"`
	// Reasons explain the decision in short sentences, most important first.
	Reasons []string `json:"reasons"`
	// Waiting is how long the oldest open ask has waited (0 when none).
	Waiting time.Duration `json:"waiting,omitempty"`
	// Pending are the ids of the messages that await the owner.
	Pending []string `json:"pending,omitempty"`
}

// reactionEvent is a tapback wherever it came from: a Reactions entry or a
// reaction row.
type reactionEvent struct {
	fromMe bool
	target string
	time   time.Time
}

// item is a message the classifier reasons about (reactions, group events
// and unsent messages removed), with its features.
type item struct {
	m *Message
	f features
}

// classifier holds per-call state; one is made per Classify.
type classifier struct {
	t        *Thread
	opts     Options
	group    bool
	owner    []string // normalised owner handles
	others   []string // normalised handles of the other members
	names    []string // lower-case first names of the other members
	me       []string // lower-case owner names
	myIDs    []string
	items    []item
	reacts   []reactionEvent
	reasons  []string
	autoCats autoCat
}

// Classify decides the bucket of one thread. It is deterministic: the same
// thread and options always give the same decision.
func Classify(t *Thread, opts Options) Decision {
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	c := classifier{t: t, opts: opts, group: t.Kind == model.KindGroup || t.participantCount() > 1}
	return c.run()
}

// ClassifyAll classifies every thread; decisions are in the order of
// threads.
func ClassifyAll(threads []Thread, opts Options) []Decision {
	out := make([]Decision, len(threads))
	opts.ownerKeys = normOwner(opts)
	for i := range threads {
		out[i] = Classify(&threads[i], opts)
	}
	return out
}

func (t *Thread) participantCount() int {
	if t.ParticipantCount > 0 {
		return t.ParticipantCount
	}
	return len(t.Participants)
}

func (c *classifier) because(format string, args ...any) {
	c.reasons = append(c.reasons, fmt.Sprintf(format, args...))
}

func (c *classifier) decide(b Bucket, code Code, score float64) Decision {
	return Decision{Bucket: b, Code: code, Score: math.Round(score*1000) / 1000, Reasons: c.reasons}
}

func (c *classifier) run() Decision {
	c.prepare()
	if len(c.items) == 0 {
		if len(c.reacts) > 0 {
			c.because("only reactions in the window")
		} else {
			c.because("no messages in the window")
		}
		return c.decide(Skip, CodeEmpty, 0)
	}
	if d, ok := c.automated(); ok {
		return d
	}
	if d, ok := c.failedSend(); ok {
		return d
	}
	return c.conversation()
}

// prepare builds the item list, the reaction events and the lookups.
func (c *classifier) prepare() {
	t := c.t
	c.owner = c.opts.ownerKeys
	if c.owner == nil {
		c.owner = normOwner(c.opts)
	}
	for _, n := range c.opts.Owner.Names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			c.me = append(c.me, n)
		}
	}
	c.others = make([]string, 0, len(t.Participants))
	for _, p := range t.Participants {
		c.others = append(c.others, c.normHandle(p.Handle))
		if first := firstWord(p.Name); first != "" {
			c.names = append(c.names, first)
		}
	}
	for i := range t.Messages {
		m := &t.Messages[i]
		for _, r := range m.Reactions {
			c.reacts = append(c.reacts, reactionEvent{fromMe: r.FromMe, target: m.ID, time: r.Time})
		}
		switch m.Kind {
		case model.MsgReaction:
			if m.Reaction != nil && !m.Reaction.Removed {
				c.reacts = append(c.reacts, reactionEvent{fromMe: m.FromMe, target: m.Reaction.Target, time: m.Time})
			}
			continue
		case model.MsgGroupEvent:
			continue
		}
		if m.Unsent {
			continue
		}
		if m.FromMe {
			c.myIDs = append(c.myIDs, m.ID)
		}
		f := analyze(m.Text)
		for _, r := range m.Runs {
			if r.Link != "" && !strings.Contains(strings.ToLower(m.Text), strings.ToLower(r.Link)) {
				f.links++
			}
			if r.OneTimeCode {
				f.autoCats |= catCode
				f.autoScore += 2
				f.strongAuto = true
			}
		}
		if f.words == 0 && !f.closure && m.Attachments == 0 && m.Kind != model.MsgApp && strings.TrimSpace(m.Text) == "" {
			continue // nothing a person wrote (an empty row)
		}
		c.items = append(c.items, item{m: m, f: f})
	}
}

func (c *classifier) normHandle(h string) string { return normHandle(h, c.opts.Region) }

func normHandle(h, region string) string {
	key, kind := contacts.Normalize(h, region)
	if kind == contacts.KindInvalid || key == "" {
		return strings.ToLower(strings.TrimSpace(h))
	}
	return key
}

func firstWord(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexAny(name, " \t"); i > 0 {
		name = name[:i]
	}
	return name
}

// senderHandle is the other party's handle in a direct chat.
func (c *classifier) senderHandle() string {
	if len(c.t.Participants) > 0 {
		return c.t.Participants[0].Handle
	}
	return c.t.ChatID
}

// senderKind is the kind of the other party's handle in a direct chat.
func (c *classifier) senderKind() contacts.Kind {
	if c.t.SenderKind != "" {
		return c.t.SenderKind
	}
	_, kind := contacts.Normalize(c.senderHandle(), c.opts.Region)
	return kind
}

var addrSeparators = strings.NewReplacer("-", "", "_", "", ".", "")

// noReplyAddress reports whether an e-mail address is a machine's mailbox
// ("no-reply@", "notifications@").
func noReplyAddress(addr string) bool {
	local, _, ok := strings.Cut(strings.ToLower(addr), "@")
	if !ok {
		return false
	}
	local = addrSeparators.Replace(local)
	switch local {
	case "noreply", "donotreply", "notifications", "notification", "alerts", "alert", "info", "news", "newsletter",
		"deals", "marketing", "mailer", "support", "accounts", "account", "security", "verify", "promo", "offers":
		return true
	}
	return strings.HasPrefix(local, "noreply") || strings.HasPrefix(local, "donotreply")
}

// automated recognises machine senders: short codes, alphanumeric ids,
// and texts whose wording gives them away (codes, deliveries, bank
// alerts, marketing, reminders), and unknown numbers that send links.
func (c *classifier) automated() (Decision, bool) {
	if c.group {
		return Decision{}, false
	}
	var inbound, autoMsgs, strong, links, human int
	fraud := false
	var cats autoCat
	// A sender that wrote one unmistakably automated text is a machine: its
	// other texts need less evidence (the confirmation after a reminder).
	proven := false
	oneWay := true
	for _, it := range c.items {
		if !it.m.FromMe && it.f.strongAuto {
			proven = true
		}
		if it.m.FromMe && !keywordReply(it) {
			oneWay = false
		}
	}
	for _, it := range c.items {
		if it.m.FromMe {
			continue
		}
		inbound++
		links += it.f.links
		if it.f.fraud {
			fraud = true
		}
		// Weak evidence counts for a sender not in the contacts when the
		// text is not written in the first person (templates rarely say
		// "I"); in a one-way thread (the owner wrote nothing, or only
		// keyword replies) one piece of it is enough. A sender proven
		// automated by a template (a STOP footer, a keyword menu, a code)
		// is a machine for all its texts unless it is a saved contact.
		weak := !it.f.personal && (it.f.autoScore >= 2 || oneWay && it.f.autoScore >= 1)
		auto := it.f.strongAuto || (!c.t.Known && weak) || (proven && (!c.t.Known || it.f.autoScore >= 1 || it.f.brand))
		if auto {
			autoMsgs++
			cats |= it.f.autoCats
			if it.f.strongAuto {
				strong++
			}
		} else if it.f.words > 0 {
			human++
		}
	}
	c.autoCats = cats
	kind := c.senderKind()
	reason := ""
	switch {
	case kind == contacts.KindShortCode:
		reason = "sender is an SMS short code"
	case kind == contacts.KindAlnum:
		reason = "sender is an alphanumeric sender id"
	case kind == contacts.KindEmail && !c.t.Known && noReplyAddress(c.senderHandle()):
		reason = "sender is a no-reply address"
	case inbound > 0 && autoMsgs > 0 && human == 0 && (!c.t.Known || strong > 0):
		reason = "automated text (" + cats.String() + ")"
		if !c.t.Known {
			reason = "unknown sender, " + reason
		}
	case inbound > 0 && !c.t.Known && links > 0 && c.noPersonalAsk():
		reason = "unknown number sending links"
	default:
		return Decision{}, false
	}
	if cats != 0 && !strings.Contains(reason, "(") {
		reason += " (" + cats.String() + ")"
	}
	c.because("%s", reason)
	last := c.items[len(c.items)-1]
	if fraud && !last.m.FromMe && c.opts.Now.Sub(last.m.Time) < 24*time.Hour {
		c.because("the alert asks you to confirm account activity")
		return c.decide(LowPriority, CodeAlert, 0.45), true
	}
	return c.decide(Skip, CodeAutomated, 0.02), true
}

// keywordReply reports whether an owner's message is a keyword answer to a
// template ("C", "1", "STOP", "yes"): one word of at most four characters.
// It makes no conversation: the thread stays one-way.
func keywordReply(it item) bool {
	return it.f.words == 1 && len(strings.TrimSpace(it.f.norm)) <= 4 && it.f.links == 0
}

// noPersonalAsk reports whether no inbound message of an unknown sender
// asks something without a link (a person introducing themselves asks;
// link spam only points somewhere).
func (c *classifier) noPersonalAsk() bool {
	for _, it := range c.items {
		if !it.m.FromMe && it.f.links == 0 && (it.f.question || it.f.request) {
			return false
		}
	}
	return true
}

// failedSend finds an outgoing message that failed and was not followed by
// a successful one.
func (c *classifier) failedSend() (Decision, bool) {
	var failed *Message
	for _, it := range c.items {
		if !it.m.FromMe {
			continue
		}
		if it.m.Error != 0 {
			failed = it.m
		} else {
			failed = nil // sent again (or something else went through)
		}
	}
	if failed == nil {
		return Decision{}, false
	}
	c.because("your message %q failed to send (error %d) and was not sent again", clip(failed.Text, 40), failed.Error)
	d := c.decide(NeedsReply, CodeFailedSend, 0.95)
	d.Pending = []string{failed.ID}
	d.Waiting = c.opts.Now.Sub(failed.Time)
	return d, true
}

// ask is an inbound message that expects something from the owner.
type ask struct {
	it       *item
	idx      int
	open     bool // a tapback cannot answer it
	strength float64
}

// conversation classifies a human thread by who spoke last and what the
// unanswered messages ask.
func (c *classifier) conversation() Decision {
	now := c.opts.Now
	lastMine := -1
	for i, it := range c.items {
		if it.m.FromMe && it.m.Error == 0 {
			lastMine = i
		}
	}
	run := c.items[lastMine+1:]
	if len(run) == 0 {
		return c.ownerSpokeLast(lastMine)
	}

	// The reply opens with an answer word right after the owner's question.
	answersMine := lastMine >= 0 && c.items[lastMine].f.question && run[0].f.answerLead
	var asks []ask
	var addressedAny, mentioned bool
	for k := range run {
		it := &run[k]
		f := &it.f
		addr, why := c.addressed(it, k == 0 && lastMine >= 0, lastMine)
		if addr && c.group && why == "mention" {
			mentioned = true
		}
		if addr {
			addressedAny = true
		}
		isAsk := f.question || f.request || f.rsvp || f.social || (f.proposal && !c.group) || (f.urgent && addr)
		if isAsk && f.closure {
			isAsk = false
		}
		if isAsk && answersMine && f.question && !f.openQ && !f.youRef && !f.request && !f.rsvp && !f.social && !f.proposal {
			// "yes!! they were in the fridge??" answering the owner's
			// question: the mark is surprise, not a question to the owner.
			isAsk = false
		}
		if isAsk && addr {
			strength := 0.5
			if f.request || f.rsvp {
				strength = 0.8
			}
			if f.urgent {
				strength = 1
			}
			if c.group && why != "reply" && why != "collective" {
				strength += 0.1
			}
			asks = append(asks, ask{it: it, idx: k, open: f.openQ || f.request && f.wordyAsk, strength: min(strength, 1)})
		}
	}

	// Withdrawn asks ("nvm, figured it out"), asks others answered and asks
	// the owner answered with a tapback are settled: they count as neither
	// open asks nor new content.
	settled := map[int]bool{}
	var open []ask
	for _, a := range asks {
		if c.cancelledLater(run, a) {
			c.because("%s withdrew the question (%q)", who(c, a.it.m), clip(a.it.m.Text, 40))
			settled[a.idx] = true
			continue
		}
		if c.group && !a.it.f.rsvp && c.answeredByOther(run, a) {
			c.because("someone else in the group answered %q", clip(a.it.m.Text, 40))
			continue
		}
		if c.reactedByMe(run, a) {
			if a.open {
				c.because("you only reacted to %q, which asks for more than a tapback", clip(a.it.m.Text, 40))
			} else {
				c.because("you reacted to %q", clip(a.it.m.Text, 40))
				settled[a.idx] = true
				continue
			}
		}
		open = append(open, a)
	}
	content := false
	for k, it := range run {
		if !it.f.closure && !it.f.cancel && !settled[k] {
			content = true
		}
	}

	if len(open) > 0 {
		first := open[0]
		wait := now.Sub(first.it.m.Time)
		pending := make([]string, len(open))
		for i, a := range open {
			pending[i] = a.it.m.ID
		}
		if wait > c.opts.StaleAfter {
			c.because("%q has waited %s; after %s it is probably settled elsewhere", clip(first.it.m.Text, 50), humanDuration(wait), humanDuration(c.opts.StaleAfter))
			d := c.decide(LowPriority, CodeStale, 0.5)
			d.Waiting, d.Pending = wait, pending
			return d
		}
		c.because("%s", askReason(c, first))
		if len(open) > 1 {
			c.because("%d unanswered messages ask something", len(open))
		}
		if wait >= time.Hour {
			c.because("waiting for %s", humanDuration(wait))
		}
		strength := 0.0
		for _, a := range open {
			strength = max(strength, a.strength)
		}
		// Score: 0.6 base, up to 0.25 for waiting (log scale, full at two
		// days), up to 0.15 for how explicit or urgent the ask is.
		w := math.Min(1, math.Log1p(wait.Hours())/math.Log1p(48))
		d := c.decide(NeedsReply, CodeAsk, 0.6+0.25*w+0.15*strength)
		d.Waiting, d.Pending = wait, pending
		return d
	}

	last := run[len(run)-1]
	lastAge := now.Sub(last.m.Time)
	if d, ok := c.clarified(run, lastMine, content); ok {
		return d
	}
	switch {
	case !content:
		c.because("ended with an acknowledgement (%q)", clip(last.m.Text, 30))
		if r := c.theirReactionAfter(lastMine); r {
			c.because("they reacted to your message")
		}
		return c.decide(LowPriority, CodeAcknowledged, 0.05)
	case c.allAcked(run):
		return c.decide(LowPriority, CodeAcknowledged, 0.08)
	case c.group && !addressedAny:
		c.because("group chatter not addressed to you")
		return c.decide(LowPriority, CodeGroup, 0.2+0.1*recency(lastAge))
	case lastAge > c.opts.StaleAfter:
		c.because("no reply expected and the last message is %s old", humanDuration(lastAge))
		return c.decide(LowPriority, CodeOld, 0.15)
	case mentioned:
		c.because("you were mentioned")
		return c.decide(LowPriority, CodeMention, 0.45)
	default:
		c.because("new message without a question or request (%q)", clip(firstContent(run).m.Text, 40))
		return c.decide(LowPriority, CodeNew, 0.25+0.15*recency(lastAge))
	}
}

// clarified finds an ask of theirs that the owner answered only with a
// question of their own ("want to split a cabin?" — "how much?" — "$140
// each, book by sunday"): the details came back and the decision is now the
// owner's, so the ask is open again.
func (c *classifier) clarified(run []item, lastMine int, content bool) (Decision, bool) {
	if !content || lastMine < 1 || c.group {
		return Decision{}, false
	}
	mine, prev := c.items[lastMine], c.items[lastMine-1]
	if !mine.f.question || mine.f.closure || prev.m.FromMe || prev.f.closure {
		return Decision{}, false
	}
	if !(prev.f.question || prev.f.request || prev.f.proposal || prev.f.rsvp) {
		return Decision{}, false
	}
	wait := c.opts.Now.Sub(run[0].m.Time)
	if wait > c.opts.StaleAfter {
		return Decision{}, false
	}
	c.because("you asked about %q and they answered: the decision is yours", clip(prev.m.Text, 40))
	w := math.Min(1, math.Log1p(wait.Hours())/math.Log1p(48))
	d := c.decide(NeedsReply, CodeAsk, 0.6+0.25*w+0.15*0.5)
	d.Waiting, d.Pending = wait, []string{prev.m.ID, run[0].m.ID}
	return d, true
}

// ownerSpokeLast handles threads whose last message is the owner's.
func (c *classifier) ownerSpokeLast(lastMine int) Decision {
	mine := c.items[lastMine]
	if mine.f.deferral && !mine.f.question && lastMine > 0 {
		// "let me check and get back to you" after an ask: the owner owes
		// an answer.
		for j := lastMine - 1; j >= 0; j-- {
			prev := c.items[j]
			if prev.m.FromMe {
				if prev.m.Error == 0 && !prev.f.deferral {
					break
				}
				continue
			}
			if prev.f.question || prev.f.request || prev.f.rsvp {
				wait := c.opts.Now.Sub(mine.m.Time)
				if wait > c.opts.StaleAfter {
					break
				}
				c.because("you said you would get back to them (%q) about %q", clip(mine.m.Text, 30), clip(prev.m.Text, 40))
				d := c.decide(NeedsReply, CodeFollowUp, 0.6+0.2*math.Min(1, math.Log1p(wait.Hours())/math.Log1p(48)))
				d.Waiting, d.Pending = c.opts.Now.Sub(prev.m.Time), []string{prev.m.ID}
				return d
			}
		}
	}
	c.because("you replied last")
	if c.theirReactionAfter(lastMine) {
		c.because("they reacted to your message")
	}
	// A finished human exchange is low_priority: the seed reserves skip
	// for what is typically automated (docs/triage.md "Buckets").
	return c.decide(LowPriority, CodeRepliedLast, 0.03)
}

// addressed reports whether an inbound message is addressed to the owner,
// and why: "direct", "mention", "name", "reply", "collective", "answer".
func (c *classifier) addressed(it *item, followsMine bool, lastMine int) (bool, string) {
	if !c.group {
		return true, "direct"
	}
	m := it.m
	toOther := false
	for _, r := range m.Runs {
		if r.Mention == "" {
			continue
		}
		h := c.normHandle(r.Mention)
		switch {
		case slices.Contains(c.owner, h):
			return true, "mention"
		case slices.Contains(c.others, h):
			toOther = true
		case len(c.owner) == 0:
			// Not one of the others: the owner, who is never listed.
			return true, "mention"
		}
	}
	n := it.f.norm
	for _, me := range c.me {
		if strings.Contains(n, " "+me+" ") {
			return true, "name"
		}
	}
	if m.ReplyTo != "" {
		if slices.Contains(c.myIDs, m.ReplyTo) {
			return true, "reply"
		}
		toOther = true
	}
	if !toOther {
		for _, name := range c.names {
			// "Sam can you book the flights", "@sam": a request to them.
			if strings.HasPrefix(n, " "+name+" ") || strings.Contains(strings.ToLower(m.Text), "@"+name) {
				toOther = true
				break
			}
		}
	}
	if !toOther && atOwner(m.Text, c.names) {
		// "@Alex can you…" naming nobody else in the group: the owner,
		// whose name the thread does not list.
		return true, "mention"
	}
	if toOther {
		return false, "other"
	}
	if it.f.collective || it.f.rsvp {
		return true, "collective"
	}
	if followsMine && it.f.youRef && lastMine >= 0 && m.Time.Sub(c.items[lastMine].m.Time) < 2*time.Hour {
		return true, "answer"
	}
	return false, ""
}

// atOwner reports whether text @-mentions a name that is none of the
// other members' first names (names), which then can only be the owner.
func atOwner(text string, names []string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && text[i-1] != ' ' && text[i-1] != '\n') {
			continue
		}
		j := i + 1
		for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z') {
			j++
		}
		if j-i < 3 {
			continue
		}
		if !slices.Contains(names, strings.ToLower(text[i+1:j])) {
			return true
		}
	}
	return false
}

func (c *classifier) cancelledLater(run []item, a ask) bool {
	for _, it := range run[a.idx+1:] {
		if it.m.Sender == a.it.m.Sender && it.f.cancel {
			return true
		}
	}
	return false
}

// answeredByOther reports whether, in a group, another member replied
// after an information question (not a head count, which each member
// answers for themselves).
func (c *classifier) answeredByOther(run []item, a ask) bool {
	if !a.it.f.collective || a.it.f.everyone {
		return false
	}
	for _, it := range run[a.idx+1:] {
		if it.m.Sender != a.it.m.Sender && !it.f.closure && it.f.words > 0 && !it.f.question {
			return true
		}
	}
	return false
}

// reactedByMe reports whether the owner reacted to the ask, or to a later
// message of the run, after it was sent.
func (c *classifier) reactedByMe(run []item, a ask) bool {
	for _, r := range c.reacts {
		if !r.fromMe || r.time.Before(a.it.m.Time) {
			continue
		}
		for _, it := range run[a.idx:] {
			if it.m.ID == r.target {
				return true
			}
		}
	}
	return false
}

// allAcked reports whether the owner reacted to the last content message of
// the run (a tapback as the answer).
func (c *classifier) allAcked(run []item) bool {
	last := run[len(run)-1]
	for _, r := range c.reacts {
		if r.fromMe && r.target == last.m.ID && !r.time.Before(last.m.Time) {
			c.because("you reacted to their last message")
			return true
		}
	}
	return false
}

// theirReactionAfter reports whether someone else reacted to one of the
// owner's messages at or after the owner's last message.
func (c *classifier) theirReactionAfter(lastMine int) bool {
	if lastMine < 0 {
		return false
	}
	t := c.items[lastMine].m.Time
	for _, r := range c.reacts {
		if !r.fromMe && slices.Contains(c.myIDs, r.target) && !r.time.Before(t) {
			return true
		}
	}
	return false
}

func firstContent(run []item) item {
	for _, it := range run {
		if !it.f.closure {
			return it
		}
	}
	return run[len(run)-1]
}

func askReason(c *classifier, a ask) string {
	text := clip(a.it.m.Text, 50)
	switch {
	case a.it.f.urgent:
		return fmt.Sprintf("%s asks urgently: %q", who(c, a.it.m), text)
	case a.it.f.rsvp:
		return fmt.Sprintf("%s needs your answer: %q", who(c, a.it.m), text)
	case a.it.f.request:
		return fmt.Sprintf("%s asked you to do something: %q", who(c, a.it.m), text)
	case a.it.f.social:
		return fmt.Sprintf("%s sent you wishes: %q", who(c, a.it.m), text)
	case a.it.f.question:
		return fmt.Sprintf("unanswered question from %s: %q", who(c, a.it.m), text)
	default:
		return fmt.Sprintf("%s suggested something: %q", who(c, a.it.m), text)
	}
}

func who(c *classifier, m *Message) string {
	if m.FromMe {
		return "you"
	}
	for _, p := range c.t.Participants {
		if p.Handle == m.Sender && p.Name != "" {
			return p.Name
		}
	}
	if !c.group && c.t.ContactName != "" {
		return c.t.ContactName
	}
	if m.Sender != "" {
		return m.Sender
	}
	return "they"
}

// recency is 1 for a message just sent, falling to 0 at two days.
func recency(age time.Duration) float64 {
	return math.Max(0, 1-age.Hours()/48)
}

// clip shortens s to n runes for reasons, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\ufffc", "[attachment]")), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// humanDuration formats a waiting time for reasons: "5m", "20h", "3d".
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// Naive is the baseline rule the classifier must beat: the thread needs a
// reply when its latest message (reactions included) is inbound, else it
// is skipped. otherwise is the bucket for the rest (Skip or LowPriority);
// the evaluation reports both variants.
func Naive(t *Thread, otherwise Bucket) Bucket {
	var last *Message
	var lastT time.Time
	for i := range t.Messages {
		m := &t.Messages[i]
		if m.Kind == model.MsgGroupEvent {
			continue
		}
		if last == nil || !m.Time.Before(lastT) {
			last, lastT = m, m.Time
		}
		for _, r := range m.Reactions {
			if !r.Time.Before(lastT) {
				last, lastT = &Message{FromMe: r.FromMe, Time: r.Time}, r.Time
			}
		}
	}
	if last != nil && !last.FromMe {
		return NeedsReply
	}
	return otherwise
}
