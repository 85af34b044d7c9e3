package dossier

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/triage"
)

// Version is the state format. A stored dossier of another version is
// rebuilt, never migrated.
const Version = 2

// ErrRebuild is returned by Update when the new messages cannot be folded
// into the state (one is not after the state's cursor, the time zone or
// the subject changed, or the state is of another version). The caller
// builds the dossier again from all messages; Refresh does so itself.
var ErrRebuild = errors.New("dossier: needs a rebuild")

// Message is one message of the subject's history, as the feed delivers
// it: the messages of the direct conversations with them, and, when
// wanted, their own messages in groups (Group set).
type Message struct {
	ID             string            `json:"id"`
	ConversationID string            `json:"conversation_id"`
	Group          bool              `json:"group,omitempty"`
	Time           time.Time         `json:"time"`
	FromMe         bool              `json:"from_me,omitempty"`
	Sender         string            `json:"sender,omitempty"` // handle; empty when FromMe
	Service        string            `json:"service,omitempty"`
	Kind           model.MessageKind `json:"kind,omitempty"` // "" means text
	Text           string            `json:"text,omitempty"`
	Error          int               `json:"error,omitempty"`
	Unsent         bool              `json:"unsent,omitempty"`
	ReplyTo        string            `json:"reply_to,omitempty"`
	// App is the balloon app of an app message (an Apple Cash payment is
	// "…PeerPaymentMessagesExtension").
	App string `json:"app,omitempty"`
}

// Subject is the person the dossier is about, from the contacts.
type Subject struct {
	// Key identifies the dossier: the contacts person id, or a normalised
	// handle for someone without a card.
	Key          string   `json:"key"`
	Name         string   `json:"name,omitempty"`
	Names        []string `json:"names,omitempty"` // other names on merged cards
	Organization string   `json:"organization,omitempty"`
	Handles      []string `json:"handles,omitempty"`
}

// Cite points at the message a claim rests on.
type Cite struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
}

// Cursor orders messages by time, then id; the state covers every message
// at or before it.
type Cursor struct {
	Time time.Time `json:"time,omitzero"`
	ID   string    `json:"id,omitempty"`
}

func (c Cursor) before(m *Message) bool {
	if c.Time.IsZero() && c.ID == "" {
		return true
	}
	if !c.Time.Equal(m.Time) {
		return c.Time.Before(m.Time)
	}
	return c.ID < m.ID
}

// Options configure Build and Update. They must be the same for every
// update of one dossier (the zone is recorded and checked).
type Options struct {
	// Location is the owner's time zone: months, quarters, days and
	// relative dates ("tomorrow") are read in it. nil means UTC.
	Location *time.Location
	// OwnerNames are kept out of the topics.
	OwnerNames []string
}

func (o Options) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// Dossier is the state of one person's dossier. Exported fields are the
// findings; State is bookkeeping for incremental updates. Everything
// serialises to JSON (Marshal/Unmarshal) for the index to store.
type Dossier struct {
	Version int     `json:"version"`
	Subject Subject `json:"subject"`
	Zone    string  `json:"zone"`
	// UpTo is the newest message folded in; Folded counts them.
	UpTo   Cursor `json:"up_to"`
	Folded int    `json:"folded"`

	Background  Background   `json:"background"`
	Commitments []Commitment `json:"commitments"`
	Quarters    []Quarter    `json:"quarters"`
	// LastSignificant is the newest closed significant exchange; the open
	// session may replace it (see Report).
	LastSignificant *Exchange `json:"last_significant,omitempty"`

	State State `json:"state"`
}

// Background are the facts about the person and the volume of contact.
type Background struct {
	FirstContact  *Cite         `json:"first_contact,omitempty"`
	LastContact   *Cite         `json:"last_contact,omitempty"`
	Sent          int           `json:"sent"`
	Received      int           `json:"received"`
	Handles       []Use         `json:"handles"`       // the handles they wrote from
	Services      []Use         `json:"services"`      // iMessage, SMS, RCS …
	Conversations []Use         `json:"conversations"` // conversation ids
	Volume        []MonthVolume `json:"volume"`        // by month, oldest first
}

// Use counts messages through one handle, service or conversation.
type Use struct {
	Name     string `json:"name"`
	Group    bool   `json:"group,omitempty"`
	Messages int    `json:"messages"`
	First    Cite   `json:"first"`
	Last     Cite   `json:"last"`
}

// MonthVolume is the message count of one month ("2026-11").
type MonthVolume struct {
	Month    string `json:"month"`
	Sent     int    `json:"sent"`
	Received int    `json:"received"`
	First    Cite   `json:"first"`
	Last     Cite   `json:"last"`
}

// Quarter is the activity of one calendar quarter ("2026-Q4").
type Quarter struct {
	Quarter    string `json:"quarter"`
	Messages   int    `json:"messages"`
	Sent       int    `json:"sent"`
	Received   int    `json:"received"`
	ActiveDays int    `json:"active_days"`
	// MyReplies are the owner's reply times to the person, TheirReplies
	// theirs to the owner (direct conversations; see triage.ReplyTracker).
	MyReplies    ReplyStats `json:"my_replies"`
	TheirReplies ReplyStats `json:"their_replies"`
	First        Cite       `json:"first"`
	Last         Cite       `json:"last"`
}

// ReplyStats summarise reply times; zero Samples means no data.
type ReplyStats struct {
	Samples       int    `json:"samples"`
	MedianSeconds int64  `json:"median_seconds,omitempty"`
	AvgSeconds    int64  `json:"avg_seconds,omitempty"`
	MedianHuman   string `json:"median_human,omitempty"`
}

// Exchange is a burst of conversation (messages less than SessionGap
// apart).
type Exchange struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Messages int       `json:"messages"`
	Sent     int       `json:"sent"`
	Received int       `json:"received"`
	// Why says what made it significant: "commitment", "question answered",
	// "long exchange".
	Why []string `json:"why"`
	// IDs cite the exchange's messages (at most MaxExchangeIDs, the first
	// ones); Excerpt is the text of its longest message, ExcerptID its id.
	IDs       []string `json:"ids"`
	Excerpt   string   `json:"excerpt"`
	ExcerptID string   `json:"excerpt_id"`
}

// Tuning of the history.
const (
	// SessionGap separates exchanges.
	SessionGap = 3 * time.Hour
	// MaxExchangeIDs bounds the ids an exchange cites.
	MaxExchangeIDs = 30
	maxExcerpt     = 280
)

// State is the bookkeeping that lets Update continue where the last
// update stopped. It is part of the stored JSON but not of the findings.
type State struct {
	Tracker triage.ReplyTracker `json:"tracker"`
	// MySamples and TheirSamples are the reply times of the newest quarter
	// (older quarters are summarised in Quarters).
	MySamples    []int64 `json:"my_samples,omitempty"`
	TheirSamples []int64 `json:"their_samples,omitempty"`
	// LastDay is the owner-zone day of the newest message ("2026-11-30").
	LastDay string              `json:"last_day,omitempty"`
	Topics  map[string]*Topic   `json:"topics,omitempty"`
	Session *session            `json:"session,omitempty"`
	NextSeq int                 `json:"next_seq"`
	Recent  []recentMessageInfo `json:"recent,omitempty"`
	// Automated is set once the subject has shown itself a machine
	// (automated.go): its commitments are dropped and it makes no more.
	Automated bool `json:"automated,omitempty"`
	// Offers are the ids of promises made as offers ("want me to save you
	// some?"): Report lists one only once the other side accepts it.
	Offers map[string]bool `json:"offers,omitempty"`
}

// recentMessageInfo remembers the last few direct messages, so a reply
// such as "will do" can find the request it accepts.
type recentMessageInfo struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	FromMe bool      `json:"from_me,omitempty"`
}

type session struct {
	Exchange
	Words     int    `json:"words"`
	BestWords int    `json:"best_words"`
	QSide     string `json:"q_side,omitempty"` // side of an unanswered question in the session
	QA        bool   `json:"qa,omitempty"`
	Commit    bool   `json:"commit,omitempty"`
}

// New returns an empty dossier for the subject.
func New(subject Subject, opts Options) *Dossier {
	return &Dossier{Version: Version, Subject: subject, Zone: opts.loc().String(),
		Background:  Background{Handles: []Use{}, Services: []Use{}, Conversations: []Use{}, Volume: []MonthVolume{}},
		Commitments: []Commitment{}, Quarters: []Quarter{}, State: State{Topics: map[string]*Topic{}}}
}

// Build folds all messages (any order) into a new dossier.
func Build(subject Subject, msgs []Message, opts Options) *Dossier {
	d := New(subject, opts)
	sorted := sortMessages(msgs)
	for _, m := range sorted {
		d.fold(m, opts)
	}
	return d
}

// Update folds new messages (any order among themselves) into the
// dossier. Every message must come after UpTo; otherwise, or when the
// options or version differ, it returns ErrRebuild and leaves d unchanged.
// The subject's contact details are replaced by subject's.
func (d *Dossier) Update(subject Subject, msgs []Message, opts Options) error {
	if d.Version != Version || d.Zone != opts.loc().String() || d.Subject.Key != subject.Key {
		return ErrRebuild
	}
	sorted := sortMessages(msgs)
	for _, m := range sorted {
		if !d.UpTo.before(m) {
			return fmt.Errorf("message %s at %s is not after %s: %w", m.ID, m.Time.Format(time.RFC3339), d.UpTo.Time.Format(time.RFC3339), ErrRebuild)
		}
	}
	d.Subject = subject
	for _, m := range sorted {
		d.fold(m, opts)
	}
	return nil
}

func sortMessages(msgs []Message) []*Message {
	out := make([]*Message, len(msgs))
	for i := range msgs {
		out[i] = &msgs[i]
	}
	slices.SortStableFunc(out, func(a, b *Message) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// counted reports whether a message is a message someone wrote (not a
// reaction row, group event, unsent message or failed send).
func counted(m *Message) bool {
	switch m.Kind {
	case model.MsgReaction, model.MsgGroupEvent:
		return false
	}
	return !m.Unsent && !(m.FromMe && m.Error != 0)
}

// fold adds one message to the state.
func (d *Dossier) fold(m *Message, opts Options) {
	d.UpTo = Cursor{Time: m.Time, ID: m.ID}
	if !counted(m) {
		return
	}
	d.Folded++
	loc := opts.loc()
	lt := m.Time.In(loc)
	cite := Cite{ID: m.ID, Time: m.Time}

	// Background.
	b := &d.Background
	if b.FirstContact == nil {
		c := cite
		b.FirstContact = &c
	}
	c := cite
	b.LastContact = &c
	if m.FromMe {
		b.Sent++
	} else {
		b.Received++
		if m.Sender != "" {
			b.Handles = use(b.Handles, m.Sender, false, cite)
		}
	}
	if m.Service != "" {
		b.Services = use(b.Services, m.Service, false, cite)
	}
	if m.ConversationID != "" {
		b.Conversations = use(b.Conversations, m.ConversationID, m.Group, cite)
	}
	month := lt.Format("2006-01")
	if n := len(b.Volume); n == 0 || b.Volume[n-1].Month != month {
		b.Volume = append(b.Volume, MonthVolume{Month: month, First: cite})
	}
	v := &b.Volume[len(b.Volume)-1]
	v.Last = cite
	if m.FromMe {
		v.Sent++
	} else {
		v.Received++
	}

	// Quarters: a new quarter closes the previous one's reply samples and
	// prunes one-off topics.
	qk := fmt.Sprintf("%d-Q%d", lt.Year(), (int(lt.Month())-1)/3+1)
	if n := len(d.Quarters); n == 0 || d.Quarters[n-1].Quarter != qk {
		if n > 0 {
			d.closeQuarter()
		}
		d.Quarters = append(d.Quarters, Quarter{Quarter: qk, First: cite})
	}
	q := &d.Quarters[len(d.Quarters)-1]
	q.Messages++
	q.Last = cite
	if m.FromMe {
		q.Sent++
	} else {
		q.Received++
	}
	day := lt.Format("2006-01-02")
	if day != d.State.LastDay {
		q.ActiveDays++
		d.State.LastDay = day
	}

	// Reply times, direct conversations only.
	if !m.Group {
		tm := triage.Message{ID: m.ID, Time: m.Time, FromMe: m.FromMe, Kind: m.Kind}
		if mine, theirs, ok := d.State.Tracker.Add(&tm); ok {
			if mine.ReplyID != "" {
				d.State.MySamples = append(d.State.MySamples, mine.Seconds)
			}
			if theirs.ReplyID != "" {
				d.State.TheirSamples = append(d.State.TheirSamples, theirs.Seconds)
			}
		}
	}

	feats := newTextInfo(m.Text)
	d.addTopics(m, feats, day, month, opts)
	committed := false
	if !m.Group && !d.State.Automated && d.machine(m) {
		d.State.Automated = true
		d.Commitments = []Commitment{}
	}
	if !m.Group && !d.State.Automated {
		committed = d.commitments(m, feats, loc)
	}
	if !m.Group {
		d.State.Recent = append(d.State.Recent, recentMessageInfo{ID: m.ID, Time: m.Time, FromMe: m.FromMe})
		if len(d.State.Recent) > 6 {
			d.State.Recent = d.State.Recent[1:]
		}
	}
	d.session(m, feats, committed)
}

func use(list []Use, name string, group bool, c Cite) []Use {
	for i := range list {
		if list[i].Name == name {
			list[i].Messages++
			list[i].Last = c
			return list
		}
	}
	return append(list, Use{Name: name, Group: group, Messages: 1, First: c, Last: c})
}

// closeQuarter summarises the newest quarter's reply times (kept raw in
// State until then; Report summarises the open quarter on the fly).
func (d *Dossier) closeQuarter() {
	q := &d.Quarters[len(d.Quarters)-1]
	q.MyReplies = summarizeSamples(d.State.MySamples)
	q.TheirReplies = summarizeSamples(d.State.TheirSamples)
	d.State.MySamples, d.State.TheirSamples = nil, nil
	d.pruneTopics()
}

func summarizeSamples(s []int64) ReplyStats {
	if len(s) == 0 {
		return ReplyStats{}
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	n := len(sorted)
	med := sorted[n/2]
	if n%2 == 0 {
		med = (sorted[n/2-1] + sorted[n/2] + 1) / 2
	}
	var sum int64
	for _, v := range sorted {
		sum += v
	}
	avg := (sum + int64(n)/2) / int64(n)
	return ReplyStats{Samples: n, MedianSeconds: med, AvgSeconds: avg, MedianHuman: triage.HumanSeconds(med)}
}

// session tracks the current exchange and keeps the last significant one.
func (d *Dossier) session(m *Message, f textInfo, committed bool) {
	s := d.State.Session
	if s != nil && m.Time.Sub(s.End) > SessionGap {
		d.closeSession()
		s = nil
	}
	if s == nil {
		s = &session{Exchange: Exchange{Start: m.Time, IDs: []string{}}}
		d.State.Session = s
	}
	s.End = m.Time
	s.Messages++
	side := "them"
	if m.FromMe {
		s.Sent++
		side = "me"
	} else {
		s.Received++
	}
	if len(s.IDs) < MaxExchangeIDs {
		s.IDs = append(s.IDs, m.ID)
	}
	s.Words += f.words
	if f.words > s.BestWords {
		s.BestWords, s.ExcerptID, s.Excerpt = f.words, m.ID, clip(m.Text, maxExcerpt)
	}
	if s.QSide != "" && s.QSide != side && f.words >= 2 {
		s.QA, s.QSide = true, ""
	}
	if f.question && f.words >= 3 {
		s.QSide = side
	}
	if committed {
		s.Commit = true
	}
}

// significance says why an exchange matters, or nil.
func (s *session) significance() []string {
	var why []string
	if s.Commit {
		why = append(why, "commitment")
	}
	if s.QA {
		why = append(why, "question answered")
	}
	if s.Messages >= 6 && s.Sent >= 2 && s.Received >= 2 || s.Sent >= 1 && s.Received >= 1 && s.Words >= 60 {
		why = append(why, "long exchange")
	}
	return why
}

func (d *Dossier) closeSession() {
	s := d.State.Session
	if s == nil {
		return
	}
	if why := s.significance(); len(why) > 0 {
		ex := s.Exchange
		ex.Why = why
		ex.IDs = slices.Clone(ex.IDs)
		d.LastSignificant = &ex
	}
	d.State.Session = nil
}

// clip shortens s to n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\ufffc", "[attachment]")), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
