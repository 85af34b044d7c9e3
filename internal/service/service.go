// Package service is Tidings' one query layer: the MCP tools, the bridge
// worker and the CLI all read messages, contacts, triage and dossiers
// through a *Service, so every behaviour — read policy, redaction,
// sanitisation, name resolution, bounds — is implemented once.
//
// Results are plain Go values whose JSON names follow the project's
// contracts: the bridge protocol's review, search, chat_history,
// response_stats and contacts_lookup (docs/bridge.md), and the tools'
// conversations and dossiers (docs/tools.md). Every string
// that came from outside has already passed the output boundary
// (internal/output): bodies are redacted and sanitised, names and titles
// sanitised as one line. Bodies are NOT wrapped in
// <untrusted_external_content>: the MCP layer wraps them (see [Wrap]
// helpers in internal/mcpserver), the bridge returns them plain, as the
// protocol says.
//
// The read policy is enforced three times: at ingestion (the index is
// opened with [Gate] as its Policy, so a blocked thread never enters), at
// query time inside the index, and again here on every result. When the
// policy's fingerprint changes, the service asks the index to purge the
// threads that became blocked before it answers.
//
// Errors a caller can fix (an unknown contact, an ambiguous name, a bad
// cursor, a path outside the allowed folders) are *Error values with one
// clear sentence; they never contain message content.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
)

// Index is what the service needs from the message index; *index.Index
// implements it. It must be opened with the service's [Gate] as its
// Policy (index.Options.Policy) so ingestion and the index's own query
// filters use the same policy.
type Index interface {
	ListConversations(ctx context.Context, opts index.ListOptions) (index.ConversationList, error)
	Conversation(ctx context.Context, id string) (index.Conversation, error)
	ResolveConversations(ctx context.Context, chat string, directOnly bool) ([]index.Conversation, error)
	History(ctx context.Context, q index.HistoryQuery) (index.History, error)
	MessagesInWindow(ctx context.Context, q index.WindowQuery) (index.Window, error)
	// Unread counts unread incoming messages per conversation and sender.
	Unread(ctx context.Context, since time.Time) (map[string]map[string]int, error)
	Search(ctx context.Context, q index.Query) (*index.Result, error)
	AttachmentFile(ctx context.Context, id string) (index.AttachmentLocation, error)
	Status(ctx context.Context) (index.Status, error)
	ApplyPolicy(ctx context.Context) (int, error)
	// AppliedPolicy is the fingerprint of the policy the stored rows were
	// last checked against.
	AppliedPolicy(ctx context.Context) (string, error)
}

// ContactBook supplies the person's address book; nil means no contacts
// source is configured. [FileBook] reloads configured files when they
// change.
type ContactBook interface {
	Book(ctx context.Context) (*contacts.Book, error)
}

// Options configure a Service.
type Options struct {
	// Index is required.
	Index Index
	// Gate is the read policy; required (a service without a policy would
	// show everything, so New refuses).
	Gate *Gate
	// Contacts is the address book; nil: names come only from the index.
	Contacts ContactBook
	// Dossiers stores living dossiers; nil: dossiers are built on each
	// request and not kept.
	Dossiers DossierStore
	// Attachments finds attachment files the index has no path for (the
	// chat.db reader); nil: only paths the index holds are used.
	Attachments AttachmentResolver
	// Summarizer writes the optional generated dossier summary; nil (the
	// default) means dossiers are extractive only. SummaryWait bounds how
	// long a dossier call waits for it (0 = 8 s); a summary not ready by
	// then is delivered by a later call.
	Summarizer  DossierSummarizer
	SummaryWait time.Duration
	// Boundary converts outside strings; nil means
	// output.New(redact.Default()).
	Boundary *output.Boundary
	// Now is the clock (config.Config.Now); nil means time.Now.
	Now func() time.Time
	// Location is the time zone results are shown in; nil means time.Local.
	Location *time.Location
	// Region is the default phone region for names and handles ("US").
	Region string
	// Logger receives diagnostics (never message content); nil discards.
	Logger *slog.Logger
	// SemanticOff, when set, is the one sentence saying why this process
	// has no vector signal although one is configured: the embedder is an
	// external endpoint and allow_external = false, so it was not built
	// (docs/embeddings.md). Hybrid and semantic searches then run full
	// text only and carry this sentence in their notes, as does
	// get_status.search.
	SemanticOff string
}

// Service is the query layer. Its methods are safe for concurrent use.
type Service struct {
	ix       Index
	gate     *Gate
	book     ContactBook
	dossiers DossierStore
	att      AttachmentResolver
	out      *output.Boundary
	now      func() time.Time
	loc      *time.Location
	region   string
	log      *slog.Logger

	// people makes the policy person-aware when there is an address book.
	people *peopleSource

	applyMu   sync.Mutex
	appliedFP string // fingerprint of the last policy the index was purged for
	dossierMu sync.Mutex

	semanticOff string

	summ     DossierSummarizer
	summWait time.Duration
	summMu   sync.Mutex
	summJobs map[string]*summaryJob // by dossier key
}

// New returns a Service. It fails without an index or a policy gate.
func New(opts Options) (*Service, error) {
	if opts.Index == nil {
		return nil, errors.New("service: no index")
	}
	if opts.Gate == nil {
		return nil, errors.New("service: no read policy")
	}
	s := &Service{ix: opts.Index, gate: opts.Gate, book: opts.Contacts, dossiers: opts.Dossiers, att: opts.Attachments, out: opts.Boundary,
		now: opts.Now, loc: opts.Location, region: opts.Region, log: opts.Logger, summ: opts.Summarizer, summWait: opts.SummaryWait,
		semanticOff: opts.SemanticOff}
	if s.out == nil {
		s.out = output.New(redact.Default())
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.loc == nil {
		s.loc = time.Local
	}
	if s.region == "" {
		s.region = "US"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.summWait <= 0 {
		s.summWait = summaryWait
	}
	if s.book != nil {
		// Blocking one handle of a person blocks all of theirs: the gate
		// (which the index shares) learns who is who from the book.
		s.people = s.gate.linkPeople()
		if fb, ok := s.book.(*FileBook); ok {
			fb.notify(s.people.setBook)
		}
	}
	return s, nil
}

// Contacts returns the address book the service resolves names with, or
// nil when none is configured (the send gate shares it).
func (s *Service) Contacts() ContactBook { return s.book }

// Error is a problem the caller can fix, stated in one sentence that never
// contains message content.
type Error struct {
	Msg string
	// Candidates are the people an ambiguous name matched (name and the
	// bridge's phone_last10/email), for callers that show them as a list.
	Candidates []ContactMatch
	err        error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.err }

func userErr(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// ErrNotFound is wrapped by errors about a conversation, contact, message
// or attachment that does not exist or that the read policy hides; the two
// cases read the same, so an answer never reveals a blocked thread.
var ErrNotFound = errors.New("not found")

func notFound(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), err: ErrNotFound}
}

// ErrPolicy is wrapped when the read policy cannot be loaded: nothing is
// answered until it is fixed (fail closed).
var ErrPolicy = errors.New("read policy unavailable")

// begin runs before every read: it loads the current policy (failing
// closed) and, when the policy changed since the index was last purged for
// it, purges the threads it now blocks.
func (s *Service) begin(ctx context.Context) (*policy.Policy, error) {
	s.notePeople(ctx)
	p, err := s.gate.Refresh()
	if err != nil {
		return nil, &Error{Msg: "the read policy could not be loaded, so nothing can be read until it is fixed: " + err.Error() +
			" (run `tidings policy list` to check it)", err: ErrPolicy}
	}
	s.applyPolicy(ctx, p)
	return p, nil
}

// notePeople hands the current address book to the person-aware policy
// before it is read (a book that cannot be loaded leaves the last one; the
// request reports the error where it needs names).
func (s *Service) notePeople(ctx context.Context) {
	if s.people == nil {
		return
	}
	if b, err := s.contactBook(ctx); err == nil {
		s.people.setBook(b)
	}
}

// applyPolicy purges threads that became blocked when p's fingerprint
// differs from the last one applied.
func (s *Service) applyPolicy(ctx context.Context, p *policy.Policy) {
	fp := p.Fingerprint()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if fp == s.appliedFP {
		return
	}
	n, err := s.ix.ApplyPolicy(ctx)
	if err != nil {
		// A read-only index cannot purge; its queries still filter.
		s.log.Debug("read policy changed; index not purged", "err", err)
	} else if n > 0 {
		s.log.Info("read policy changed; purged threads it now blocks", "threads", n)
	}
	if n, err := s.purgeDossiers(ctx, p); err != nil {
		s.log.Warn("read policy changed; dossiers not purged", "err", err)
	} else if n > 0 {
		s.log.Info("read policy changed; removed dossiers it now hides", "dossiers", n)
	}
	s.appliedFP = fp
}

// ApplyPolicy brings the index and the stored dossiers in line with the
// current read policy now: it purges every thread and dossier the policy
// hides (docs/security.md, "Reload and fingerprint"). `tidings policy`
// calls it after an edit, and the CLI's read commands before they answer
// when PolicyApplied says the index was checked against another policy.
// It returns the number of threads purged; with a policy that cannot be
// loaded, or an index opened read-only, it fails and changes nothing.
func (s *Service) ApplyPolicy(ctx context.Context) (int, error) {
	s.notePeople(ctx)
	p, err := s.gate.Refresh()
	if err != nil {
		return 0, fmt.Errorf("apply read policy: %w", err)
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	n, err := s.ix.ApplyPolicy(ctx)
	if err != nil {
		return n, err
	}
	if _, err := s.purgeDossiers(ctx, p); err != nil {
		return n, fmt.Errorf("apply read policy to dossiers: %w", err)
	}
	s.appliedFP = p.Fingerprint()
	return n, nil
}

// PolicyApplied reports whether the index's rows were last checked against
// the current read policy (the person-aware one, as every request sees
// it). false means a purge is due.
func (s *Service) PolicyApplied(ctx context.Context) (bool, error) {
	s.notePeople(ctx)
	p, err := s.gate.Refresh()
	if err != nil {
		return false, err
	}
	fp, err := s.ix.AppliedPolicy(ctx)
	if err != nil {
		return false, err
	}
	return fp == p.Fingerprint(), nil
}

// WatchPolicy applies policy changes every interval until ctx ends, so a
// thread the person blocks leaves the index promptly even when no request
// comes in. Load errors are logged; reads fail closed meanwhile.
func (s *Service) WatchPolicy(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = 2 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.notePeople(ctx)
			p, err := s.gate.Refresh()
			if err != nil {
				s.log.Warn("read policy could not be loaded; reads are refused until it is fixed", "err", err)
				continue
			}
			s.applyPolicy(ctx, p)
		}
	}
}

// indexErr turns an index error into what the caller should see.
func indexErr(what string, err error) error {
	switch {
	case errors.Is(err, index.ErrNotFound):
		return notFound("%s", strings.TrimSuffix(cleanIndexMsg(err), ": "+index.ErrNotFound.Error()))
	case errors.Is(err, index.ErrBadCursor):
		return userErr("the cursor is not valid for this request; start again without it")
	case errors.Is(err, index.ErrBadQuery):
		return userErr("%s", cleanIndexMsg(err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// cleanIndexMsg removes the sentinel suffixes the index appends.
func cleanIndexMsg(err error) string {
	m := err.Error()
	for _, suf := range []string{": " + index.ErrNotFound.Error(), ": " + index.ErrBadQuery.Error(), ": " + index.ErrBadCursor.Error()} {
		m = strings.TrimSuffix(m, suf)
	}
	return m
}

// ts shows a time in the service's zone (zero stays zero).
func (s *Service) ts(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(s.loc)
}

// names applies output.Name to each element into a new slice (nil stays
// nil).
func names(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = output.Name(s)
	}
	return out
}
