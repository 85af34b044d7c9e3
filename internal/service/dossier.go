package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// Dossier output limits (the report's own lists are bounded except the
// open commitments).
const (
	maxActiveShown = 30
	maxPastShown   = 20
	// dossierMaxMessages bounds the messages one dossier build reads.
	dossierMaxMessages = 100000
)

// DossierParams are get_contact_dossier's arguments.
type DossierParams struct {
	// ContactID is a contact id from lookup_contacts, a phone number in any
	// format or an e-mail address (a name works too when it is unique).
	ContactID string
	// Rebuild ignores the stored state.
	Rebuild bool
}

// DossierReport is get_contact_dossier's result: the dossier package's
// report (background, commitments, relationship history; every claim
// cites message ids) with every string through the output boundary.
type DossierReport struct {
	ContactID string `json:"contact_id"`
	// Stored is true when the dossier is kept and updated incrementally;
	// Rebuilt says this call built it from all messages.
	Stored  bool `json:"stored"`
	Rebuilt bool `json:"rebuilt"`
	dossier.Report
	// Truncated says commitment lists were cut (Note says how).
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
	// SummaryNote says what the generated summary is (or why there is
	// none) when a summary endpoint is configured.
	SummaryNote string `json:"summary_note,omitempty" jsonschema:"present when a summary endpoint is configured: says that summary is machine-generated (not a quote, may be wrong) or why it is missing"`
}

// DossierSummarizer writes the optional generated summary of a dossier
// (*dossier.Summarizer, an OpenAI-compatible chat endpoint).
type DossierSummarizer interface {
	Summarize(ctx context.Context, r dossier.Report) (*dossier.Summary, error)
}

// Bounds of the generated summary: how long a dossier call waits for it
// (the rest of the answer is ready; a bridge client gives up after 15 s),
// and how long the endpoint may take in the background.
const (
	summaryWait    = 8 * time.Second
	summaryTimeout = 90 * time.Second
)

// summaryJob is the generated summary of one dossier state, written in
// the background and kept until the dossier moves on.
type summaryJob struct {
	upTo dossier.Cursor
	done chan struct{}
	sum  *dossier.Summary
	err  error
}

// subjectOf resolves a dossier's subject and its direct conversations.
func (s *Service) subjectOf(ctx context.Context, p *policy.Policy, ref string) (dossier.Subject, []string, error) {
	ref = trimRef(ref)
	if ref == "" {
		return dossier.Subject{}, nil, userErr("contact_id is required: a contact id from lookup_contacts, a phone number or an e-mail address")
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return dossier.Subject{}, nil, err
	}
	var person *contacts.Person
	var t target
	if book != nil {
		if pp, ok := book.Person(ref); ok {
			person = &pp
		}
	}
	if person == nil {
		if t, err = s.resolveChat(ctx, p, ref); err != nil {
			return dossier.Subject{}, nil, err
		}
		person = t.person
		for _, c := range t.convs {
			if c.Kind == model.KindGroup {
				return dossier.Subject{}, nil, userErr("a dossier is about one person: give their contact id, phone number or e-mail address, not a group conversation")
			}
		}
	}
	var subj dossier.Subject
	var handles []string
	if person != nil {
		hs, ok := allowPerson(p, handleKeys(*person))
		if !ok {
			return dossier.Subject{}, nil, notFound("no contact or conversation matches %q in the messages Tidings can read", output.Name(ref))
		}
		subj = dossier.Subject{Key: person.ID, Name: person.Name, Names: slices.Clone(person.AlsoKnownAs), Organization: person.Organization, Handles: hs}
		handles = hs
	} else {
		// Someone without a card: the dossier is keyed by their handle.
		key, _ := contacts.Normalize(ref, s.region)
		if key == "" && len(t.convs) > 0 {
			key = t.convs[0].Identifier
		}
		subj = dossier.Subject{Key: "h:" + key, Handles: []string{key}}
		handles = []string{key}
	}
	var convs []string
	seen := map[string]bool{}
	for _, h := range handles {
		cs, err := s.ix.ResolveConversations(ctx, h, true)
		if err != nil && !errors.Is(err, index.ErrNotFound) {
			return dossier.Subject{}, nil, indexErr("resolve conversation", err)
		}
		for _, c := range cs {
			if !seen[c.ID] && allowConv(p, c) {
				seen[c.ID] = true
				convs = append(convs, c.ID)
			}
		}
	}
	sort.Strings(convs)
	if len(convs) == 0 {
		name := cmpOr(subj.Name, ref)
		return dossier.Subject{}, nil, notFound("there is no conversation with %s in the messages Tidings can read, so there is nothing to build a dossier from", output.Name(name))
	}
	// The subject stays raw for the build (the summarizer wraps it, topics
	// leave its words out); cleanReport passes it through output.Name.
	return subj, convs, nil
}

// Dossier returns the living dossier of a person: stored state brought up
// to date with the messages since it was last built (or built from all of
// them), as a report that cites message ids for every claim. Message text
// enters the dossier already redacted and sanitised, so no secret is ever
// stored in it or extracted from it.
func (s *Service) Dossier(ctx context.Context, prm DossierParams) (DossierReport, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return DossierReport{}, err
	}
	subj, convs, err := s.subjectOf(ctx, p, prm.ContactID)
	if err != nil {
		return DossierReport{}, err
	}
	s.dossierMu.Lock()
	defer s.dossierMu.Unlock()
	feed := &dossierFeed{s: s, convs: convs, authors: newAuthors(p)}
	opts := dossier.RefreshOptions{Options: dossier.Options{Location: s.loc}, Rebuild: prm.Rebuild}
	var d *dossier.Dossier
	rebuilt := true
	if s.dossiers != nil {
		d, rebuilt, err = dossier.Refresh(ctx, storeAdapter{s.dossiers, p.Fingerprint()}, feed, subj, opts)
	} else {
		var msgs []dossier.Message
		if err = feed.Messages(ctx, subj, dossier.Cursor{}, func(m dossier.Message) error { msgs = append(msgs, m); return nil }); err == nil {
			d = dossier.Build(subj, msgs, opts.Options)
		}
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return DossierReport{}, e
		}
		return DossierReport{}, fmt.Errorf("dossier: %w", err)
	}
	if feed.cut {
		return DossierReport{}, userErr("this person has more than %d messages; a dossier this large is not built", dossierMaxMessages)
	}
	out := DossierReport{ContactID: subj.Key, Stored: s.dossiers != nil, Rebuilt: rebuilt, Report: d.Report(s.now())}
	if s.summ != nil {
		out.Summary, out.SummaryNote = s.generatedSummary(ctx, subj.Key, out.Report)
	}
	s.cleanReport(&out)
	return out, nil
}

// generatedSummary returns the generated summary of the report's dossier state and
// the sentence that labels it. A summary is written once per state (in
// the background, so a slow endpoint never holds the dossier back longer
// than summaryWait) and reused until the dossier changes; a failed one is
// tried again on the next call.
func (s *Service) generatedSummary(ctx context.Context, key string, r dossier.Report) (*dossier.Summary, string) {
	s.summMu.Lock()
	job := s.summJobs[key]
	if job != nil && job.upTo.ID == r.UpTo.ID && job.upTo.Time.Equal(r.UpTo.Time) {
		select {
		case <-job.done:
			if job.err != nil {
				job = nil // try again
			}
		default:
		}
	} else {
		job = nil
	}
	if job == nil {
		// The caller goes on to clean the report in place; the background
		// job gets its own copy.
		var own dossier.Report
		if b, err := json.Marshal(r); err == nil && json.Unmarshal(b, &own) == nil {
			r = own
		} else {
			s.summMu.Unlock()
			return nil, "no generated summary: the dossier could not be copied for it"
		}
		job = &summaryJob{upTo: r.UpTo, done: make(chan struct{})}
		if s.summJobs == nil {
			s.summJobs = map[string]*summaryJob{}
		}
		s.summJobs[key] = job
		go func() {
			defer close(job.done)
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), summaryTimeout)
			defer cancel()
			job.sum, job.err = s.summ.Summarize(ctx, r)
			if job.err != nil {
				s.log.Warn("dossier summary not generated", "err", job.err)
			}
		}()
	}
	s.summMu.Unlock()
	t := time.NewTimer(s.summWait)
	defer t.Stop()
	select {
	case <-job.done:
	case <-t.C:
		return nil, "a generated summary is being written by the configured summary endpoint; call get_contact_dossier again shortly to include it (everything else in this dossier is complete)"
	case <-ctx.Done():
		return nil, "the generated summary was not waited for: the request ended"
	}
	if job.err != nil {
		return nil, "no generated summary: the configured summary endpoint failed (" + clipSentence(job.err.Error(), 200) + "); everything else in this dossier is extracted and complete"
	}
	return job.sum, fmt.Sprintf("summary is GENERATED by the model %q from the extracted facts of this dossier (it cites the messages they rest on): it is not a quote and may be wrong; the commitments and history above are extracted from the messages", output.Name(job.sum.Model))
}

// clipSentence shortens s to n runes.
func clipSentence(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// cleanReport passes every string of a report through the boundary and
// bounds its open lists.
func (s *Service) cleanReport(r *DossierReport) {
	r.AsOf = s.ts(r.AsOf)
	// Names and handles leave through the boundary like everything else
	// (a stored report's subject too).
	sub := &r.Subject
	sub.Name, sub.Organization = output.Name(sub.Name), output.Name(sub.Organization)
	sub.Names, sub.Handles = names(sub.Names), names(sub.Handles)
	bg := &r.Background
	for _, l := range [][]dossier.Use{bg.Handles, bg.Services, bg.Conversations} {
		for i := range l {
			l[i].Name = output.Name(l[i].Name)
		}
	}
	clean := func(cs []dossier.Commitment) []dossier.Commitment {
		for i := range cs {
			c := &cs[i]
			c.Text, _ = capRunes(s.out.Body(c.Text, nil), 600)
			c.What, _ = capRunes(s.out.Body(c.What, nil), 300)
			if c.Amount != nil {
				a := *c.Amount
				a.Text, a.Currency = output.Name(a.Text), output.Name(a.Currency)
				c.Amount = &a
			}
			if c.Due != nil {
				due := *c.Due
				due.Phrase = output.Name(due.Phrase)
				due.Start, due.End = s.ts(due.Start), s.ts(due.End)
				c.Due = &due
			}
		}
		return cs
	}
	var notes []string
	if len(r.Active) > maxActiveShown {
		notes = append(notes, fmt.Sprintf("%d active commitments, the newest %d shown", len(r.Active), maxActiveShown))
		r.Active = r.Active[len(r.Active)-maxActiveShown:]
	}
	if len(r.Past) > maxPastShown {
		notes = append(notes, fmt.Sprintf("%d past-due commitments, the newest %d shown", len(r.Past), maxPastShown))
		r.Past = r.Past[len(r.Past)-maxPastShown:]
	}
	r.Active, r.Past, r.Resolved = clean(r.Active), clean(r.Past), clean(r.Resolved)
	for i := range r.History.Topics {
		r.History.Topics[i].Term = s.out.Line(r.History.Topics[i].Term)
	}
	if ex := r.History.LastSignificant; ex != nil {
		e := *ex
		e.Excerpt, _ = capRunes(s.out.Body(e.Excerpt, nil), 600)
		e.Start, e.End = s.ts(e.Start), s.ts(e.End)
		r.History.LastSignificant = &e
	}
	r.History.ResponseTrend.Explanation = output.Name(r.History.ResponseTrend.Explanation)
	if r.Summary != nil {
		sm := *r.Summary
		sm.Text, _ = capRunes(s.out.Body(sm.Text, nil), 2000)
		r.Summary = &sm
	}
	if len(notes) > 0 {
		r.Truncated = true
		r.Note = strings.Join(notes, "; ")
	}
}

// mailIndex is the optional part of Index that holds synced mail
// (*index.Index implements it; an Index without mail cites none).
type mailIndex interface {
	MailWith(ctx context.Context, addrs []string, since time.Time, limit int) ([]index.MailEvidence, error)
}

// dossierFeed delivers a subject's direct-conversation messages, bodies
// redacted and sanitised.
type dossierFeed struct {
	s       *Service
	convs   []string
	authors *authors // whose messages are left out
	cut     bool
}

// Messages implements dossier.Feed: the subject's direct conversations
// and their 1:1 e-mail synced into the index (index.MailWith; cited as
// "mail:Account/Path#UID", docs/dossier.md).
func (f *dossierFeed) Messages(ctx context.Context, subj dossier.Subject, after dossier.Cursor, fn func(dossier.Message) error) error {
	var all []dossier.Message
	seen := map[string]bool{}
	for _, conv := range f.convs {
		q := index.HistoryQuery{Chat: conv, Limit: 500}
		if !after.Time.IsZero() {
			q.Since = after.Time
		}
		for {
			h, err := f.s.ix.History(ctx, q)
			if err != nil {
				return indexErr("read messages", err)
			}
			for _, m := range f.authors.filter(h.Messages) {
				if seen[m.ID] || m.Kind == model.MsgReaction || !afterCursor(after, m) {
					continue
				}
				seen[m.ID] = true
				all = append(all, f.message(conv, m))
			}
			if !h.More || h.NextCursor == "" {
				break
			}
			if len(all) > dossierMaxMessages {
				f.cut = true
				return nil
			}
			q.Cursor = h.NextCursor
		}
	}
	var mail []index.MailEvidence
	if mx, ok := f.s.ix.(mailIndex); ok {
		var err error
		if mail, err = mx.MailWith(ctx, subj.Handles, after.Time.Add(-time.Millisecond), dossierMaxMessages+1); err != nil {
			return indexErr("read mail", err)
		}
	}
	for _, m := range mail {
		dm := dossier.Message{ID: m.ID, ConversationID: "mail:" + m.Account, Time: m.Date, FromMe: m.FromMe, Sender: m.From, Service: "mail",
			Text: f.s.out.Body(strings.TrimSpace(m.Subject+"\n\n"+m.Body), nil)}
		if !afterCursor(after, index.Message{ID: dm.ID, Time: dm.Time}) {
			continue
		}
		all = append(all, dm)
	}
	if len(all) > dossierMaxMessages {
		f.cut = true
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Time.Equal(all[j].Time) {
			return all[i].Time.Before(all[j].Time)
		}
		return all[i].ID < all[j].ID
	})
	for _, m := range all {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

func afterCursor(c dossier.Cursor, m index.Message) bool {
	if c.Time.IsZero() && c.ID == "" {
		return true
	}
	if !c.Time.Equal(m.Time) {
		return m.Time.After(c.Time)
	}
	return m.ID > c.ID
}

func (f *dossierFeed) message(conv string, m index.Message) dossier.Message {
	return dossier.Message{ID: m.ID, ConversationID: conv, Time: m.Time, FromMe: m.FromMe, Sender: m.Sender, Service: m.Service,
		Kind: m.Kind, Text: f.s.out.Body(m.Text, m.Runs), Error: m.Error, Unsent: m.Unsent, ReplyTo: m.ReplyTo, App: m.App}
}

// storeAdapter presents a DossierStore as the dossier package's Store.
// Each saved dossier records the fingerprint of the (person-aware) policy
// it was built under among its conversations, so a policy change purges
// it even when none of its conversations became hidden — a message of a
// newly blocked person inside one of them is in its text.
type storeAdapter struct {
	st DossierStore
	fp string
}

func (a storeAdapter) LoadDossier(ctx context.Context, key string) ([]byte, error) {
	return a.st.Load(ctx, key)
}

func (a storeAdapter) SaveDossier(ctx context.Context, key string, convs []string, upTo dossier.Cursor, data []byte) error {
	return a.st.Save(ctx, key, append(slices.Clone(convs), policyMark+a.fp), upTo.Time, data)
}

// RefreshDossiers brings every stored dossier up to date with the index
// (the serve wiring calls it after syncs), so a dossier is living even
// between calls. Dossiers whose subject can no longer be read are purged.
func (s *Service) RefreshDossiers(ctx context.Context) (int, error) {
	if s.dossiers == nil {
		return 0, nil
	}
	p, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	keys, err := s.dossiers.Keys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		ref := key
		if h, ok := strings.CutPrefix(key, "h:"); ok {
			ref = h
		}
		subj, convs, err := s.subjectOf(ctx, p, ref)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				// The subject is gone or hidden now: drop what was kept.
				if _, perr := s.dossiers.Purge(ctx, func(k string, _ []string) bool { return k == key }); perr != nil {
					return n, perr
				}
				continue
			}
			return n, err
		}
		s.dossierMu.Lock()
		_, _, err = dossier.Refresh(ctx, storeAdapter{s.dossiers, p.Fingerprint()}, &dossierFeed{s: s, convs: convs, authors: newAuthors(p)}, subj,
			dossier.RefreshOptions{Options: dossier.Options{Location: s.loc}})
		s.dossierMu.Unlock()
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// LastSync returns the newest sync time of the index (for the serve
// wiring's dossier refresher).
func (s *Service) LastSync(ctx context.Context) (time.Time, error) {
	st, err := s.ix.Status(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return st.LastSync, nil
}
