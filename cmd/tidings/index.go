package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/tidings-mcp/tidings/internal/android/androidindex"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail/mailindex"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
)

func init() {
	register(command{
		name:    "index",
		summary: "sync messages and contacts into the search index (progress on a terminal)",
		run:     runIndex,
	})
}

// indexFlags are the settings `tidings index` accepts on its command line.
var indexFlags = []string{"home", "imessage", "ios-backup", "android-xml", "contacts", "region", "log-level",
	"embedder", "embedder-url", "embedder-model", "embedder-api-key-env", "hardened-allowlist"}

const indexUsage = `Usage: tidings index [--imessage PATH] [--ios-backup DIR] [--android-xml FILE ...] [--contacts PATH ...] [flags]

Syncs the configured sources into the index ($TIDINGS_HOME/index.db): new
messages, edits, unsent messages and deletions since the last run, then
embeds new messages for semantic search. Safe to interrupt at any point; the
next run continues where this one stopped. Progress is shown on a terminal.

Flags:
`

// indexPath is where the index lives.
func indexPath(cfg *config.Config) string { return cfg.Path("index.db") }

// normalizer returns the handle normaliser for the configured region.
func normalizer(cfg *config.Config) func(string) string {
	return func(h string) string {
		if k, _ := contacts.Normalize(h, cfg.Region); k != "" {
			return k
		}
		return index.NormalizeHandle(h)
	}
}

// openIndex opens the index with the configured embedder.
func openIndex(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger, readOnly bool) (*index.Index, error) {
	emb, err := newEmbedder(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	pol, err := indexPolicy(cfg, readOnly)
	if err != nil {
		return nil, err
	}
	return index.Open(ctx, indexPath(cfg), index.Options{
		Embedder:        emb,
		Now:             cfg.Now,
		Location:        cfg.Location(),
		NormalizeHandle: normalizer(cfg),
		Logger:          logger,
		ReadOnly:        readOnly,
		// The read policy of $TIDINGS_HOME (serve_service.go): blocked
		// threads never enter, and queries filter again.
		Policy: pol,
	})
}

// newEmbedder returns the configured embedder (internal/embed): the
// built-in one unless config says model2vec or http. An external embedder
// (http) under allow_external = false is not built at all, so neither a
// sync nor a query can send it text; nil means no vector signal, and the
// query layer says why (semanticOff). An http embedder without a
// configured dimension learns it with one probe request here: the index
// needs the dimension before its first batch.
func newEmbedder(ctx context.Context, cfg *config.Config, getenv func(string) string) (index.Embedder, error) {
	if embed.External(cfg.Embedder.Name) && !cfg.AllowExternal {
		return nil, nil
	}
	ec := embed.Config{Name: cfg.Embedder.Name, URL: cfg.Embedder.URL, Model: cfg.Embedder.Model, Home: cfg.Home}
	if cfg.Embedder.APIKeyEnv != "" && getenv != nil {
		ec.APIKey = getenv(cfg.Embedder.APIKeyEnv)
	}
	e, err := embed.New(ec)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	if h, ok := e.(*embed.HTTP); ok && h.Dim() == 0 {
		if _, err := h.Probe(ctx); err != nil {
			return nil, fmt.Errorf("embedder: learning the vector size from %s: %w", cfg.Embedder.URL, err)
		}
	}
	return e, nil
}

// semanticOff is the query layer's sentence for a configured vector
// signal this process does not use (service.Options.SemanticOff), or "".
func semanticOff(cfg *config.Config) string {
	if embed.External(cfg.Embedder.Name) && !cfg.AllowExternal {
		return `semantic search is off: the embedder is an external endpoint ([embedder] name = "http") and allow_external = false, so no text is sent to it; results match words only`
	}
	return ""
}

// externalEndpoints lists the configured endpoints that receive message
// text (mcpserver.Filters.Endpoints), whether or not allow_external lets
// them be used.
func externalEndpoints(cfg *config.Config) []mcpserver.Endpoint {
	var out []mcpserver.Endpoint
	if embed.External(cfg.Embedder.Name) {
		out = append(out, mcpserver.EndpointEmbedder)
	}
	if cfg.SummaryURL != "" && cfg.SummaryModel != "" {
		out = append(out, mcpserver.EndpointDossierSummary)
	}
	return out
}

// indexSources opens the configured message sources. The returned paths are
// the files to watch for live changes; close releases the readers.
func indexSources(ctx context.Context, cfg *config.Config, logger *slog.Logger) (srcs []index.Source, watch []string, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if cfg.IMessage != "" {
		r, err := imessage.Open(ctx, cfg.IMessage, imessage.Options{Logger: logger})
		if err != nil {
			return nil, nil, closeAll, &sourceError{Kind: "imessage", Path: cfg.IMessage, Err: err}
		}
		closers = append(closers, func() { r.Close() })
		srcs = append(srcs, imessageindex.Source(r, "imessage", cfg.Now))
		watch = append(watch, r.Path(), r.Path()+"-wal")
	}
	if cfg.IOSBackup != "" {
		b, err := imessage.OpenBackup(ctx, cfg.IOSBackup)
		if err != nil {
			return nil, nil, closeAll, &sourceError{Kind: "ios_backup", Path: cfg.IOSBackup, Err: err}
		}
		closers = append(closers, func() { b.Close() })
		r, err := b.OpenMessages(ctx, imessage.Options{Logger: logger})
		if err != nil {
			return nil, nil, closeAll, &sourceError{Kind: "ios_backup", Path: cfg.IOSBackup, Err: err}
		}
		closers = append(closers, func() { r.Close() })
		src := imessageindex.Source(r, "ios-backup", cfg.Now)
		src.SourceKey = "ios-backup:" + filepath.Clean(cfg.IOSBackup)
		srcs = append(srcs, src)
	}
	if len(cfg.AndroidXML) > 0 {
		a := androidindex.New(cfg.AndroidXML, cfg.Region)
		a.Logger = logger
		srcs = append(srcs, a)
		watch = append(watch, cfg.AndroidXML...)
	}
	return srcs, watch, closeAll, nil
}

// sourceError is a configured source that could not be opened; Kind and
// Path are as get_status lists the source (mcpserver.SourcesFromConfig).
// Its message is the cause's, unchanged.
type sourceError struct {
	Kind, Path string
	Err        error
}

func (e *sourceError) Error() string { return e.Err.Error() }
func (e *sourceError) Unwrap() error { return e.Err }

// unreadableSources is get_status's source list when a source could not be
// opened at start: that source is reported unreadable with the reason (an
// error about the file, never its content), not just "file".
func unreadableSources(cfg *config.Config, se *sourceError) mcpserver.SourceStatusProvider {
	return mcpserver.SourceStatusFunc(func(ctx context.Context) []mcpserver.SourceStatus {
		out := mcpserver.SourcesFromConfig{Config: cfg}.SourceStatus(ctx)
		for i := range out {
			if out[i].Kind == se.Kind && out[i].Path == se.Path {
				out[i].Detail = "unreadable, so nothing is synced from it: " + se.Err.Error()
			}
		}
		return out
	})
}

// loadContacts reads every configured contacts source into the index.
func loadContacts(ctx context.Context, ix *index.Index, cfg *config.Config, w io.Writer) error {
	for _, p := range cfg.Contacts {
		src, err := contacts.DetectSource(p)
		if err != nil {
			return fmt.Errorf("contacts %s: %w", p, err)
		}
		cards, sts := contacts.Load(ctx, []contacts.Source{src})
		for _, st := range sts {
			if st.Err != nil {
				fmt.Fprintf(w, "contacts %s: %v\n", st.Path, st.Err)
			}
		}
		abs, _ := filepath.Abs(p)
		n, err := ix.LoadContacts(ctx, "contacts:"+abs, cards)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "contacts: %d cards from %s\n", n, p)
	}
	if src, _ := accountCards(cfg, slog.Default()); src != nil {
		cards, err := src.Contacts(ctx)
		if err != nil {
			fmt.Fprintf(w, "contacts accounts: %v\n", err)
			return nil
		}
		n, err := ix.LoadContacts(ctx, src.Key(), cards)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "contacts: %d cards from the contacts accounts\n", n)
	}
	return nil
}

// rememberContacts writes the contacts sources of cfg into its home's
// config.toml when the file names none yet, so the query commands
// (`tidings dossier Linda`) and serve know the names afterwards without
// --contacts (docs/configuration.md, "Remembered sources").
func rememberContacts(cfg *config.Config, w io.Writer, logger *slog.Logger) {
	paths := make([]string, len(cfg.Contacts))
	for i, p := range cfg.Contacts {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		paths[i] = p
	}
	wrote, err := config.Remember(cfg.Home, "contacts.sources", paths)
	switch {
	case err != nil:
		logger.Warn("contacts not remembered in config.toml; pass --contacts again next time", "err", err)
	case wrote && w != nil:
		fmt.Fprintf(w, "contacts: remembered in %s\n", cfg.Path(config.FileName))
	}
}

// indexMemoryLimit is the Go heap's soft limit while indexing (unless
// GOMEMLIMIT says otherwise): garbage from finished batches is collected
// before the heap grows past it, keeping the process within the index
// memory budget (SQLite's own memory comes on top).
const indexMemoryLimit = 128 << 20

func limitIndexMemory(getenv func(string) string) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(indexMemoryLimit)
	}
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func runIndex(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "index", indexUsage)
	loader := config.Bind(fs, indexFlags...)
	verify := fs.Bool("verify", false, "check the index's invariants after syncing (reads everything)")
	jsonOut := fs.Bool("json", false, "print the sync report as JSON")
	noEmbed := fs.Bool("no-embed", false, "skip embedding (semantic search waits for the next run or for tidings serve)")
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	logger := newLogger(m.Stderr, cfg.LogLevel)
	limitIndexMemory(m.Getenv)
	srcs, _, closeSrcs, err := indexSources(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeSrcs()
	if len(srcs) == 0 && len(cfg.Contacts) == 0 && len(cfg.Mail.Accounts) == 0 {
		return usageError{"nothing to index: pass --imessage PATH (chat.db), --ios-backup DIR or --android-xml FILE, or set them (or [[mail.accounts]]) in config.toml"}
	}
	ix, err := openIndex(ctx, cfg, m.Getenv, logger, false)
	if err != nil {
		return err
	}
	defer ix.Close()
	if err := loadContacts(ctx, ix, cfg, m.Stderr); err != nil {
		return err
	}
	if cfg.Origins["contacts"] == "flag" {
		rememberContacts(cfg, m.Stderr, logger)
	}
	var progress io.Writer
	if isTerminalWriter(m.Stderr) {
		progress = m.Stderr
	}
	rep, err := ix.Sync(ctx, index.SyncOptions{Progress: progress, Embed: !*noEmbed}, srcs...)
	if err != nil {
		return err
	}
	mailRes, err := syncMailOnce(ctx, cfg, ix, progress, logger)
	if err != nil {
		return err
	}
	// Sources that also know names (an Android export's contact names).
	for _, s := range srcs {
		if cs, ok := s.(index.ContactSource); ok {
			cards, err := cs.Contacts(ctx)
			if err != nil {
				return err
			}
			if len(cards) > 0 {
				if _, err := ix.LoadContacts(ctx, cs.Key(), cards); err != nil {
					return err
				}
			}
		}
	}
	if *verify {
		if err := ix.Verify(ctx); err != nil {
			return err
		}
	}
	st, err := ix.Status(ctx)
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(m.Stdout, map[string]any{"sync": rep, "status": st})
	}
	for _, s := range rep.Sources {
		fmt.Fprintf(m.Stdout, "%s: %d new, %d updated, %d unchanged, %d deleted, %d reactions", s.Key, s.Added, s.Updated, s.Unchanged, s.Deleted, s.Reactions)
		if s.SkippedPolicy > 0 || s.Purged > 0 {
			fmt.Fprintf(m.Stdout, "; read policy: %d messages skipped, %d threads removed", s.SkippedPolicy, s.Purged)
		}
		fmt.Fprintln(m.Stdout)
	}
	for _, r := range mailRes {
		if r.Err != nil {
			fmt.Fprintf(m.Stdout, "mail %s: sync failed: %s\n", output.Name(r.Account), output.Name(r.Err.Error()))
			continue
		}
		fmt.Fprintf(m.Stdout, "mail %s: %d new, %d flag changes, %d deleted", output.Name(r.Account), r.Stats.New, r.Stats.Flags, r.Stats.Deleted)
		if r.Stats.Blocked > 0 {
			fmt.Fprintf(m.Stdout, "; read policy: %d mails skipped", r.Stats.Blocked)
		}
		fmt.Fprintln(m.Stdout)
	}
	fmt.Fprintf(m.Stdout, "index: %d messages in %d conversations, %.1f MB at %s (took %s)\n", st.Messages, st.Conversations,
		float64(st.SizeBytes)/(1<<20), st.Path, rep.Duration.Round(time.Millisecond))
	switch {
	case st.Vectors.Embedder == "":
		fmt.Fprintln(m.Stdout, "semantic search: no embedder configured; searches use full text")
	case st.Vectors.Ready:
		fmt.Fprintf(m.Stdout, "semantic search: ready (%d vectors, %s)\n", st.Vectors.Vectors, st.Vectors.Embedder)
	default:
		fmt.Fprintf(m.Stdout, "semantic search: not ready (%d of %d messages embedded)\n", st.Vectors.Vectors, st.Vectors.Searchable)
	}
	return nil
}

// syncMailOnce syncs every [[mail.accounts]] backend into ix once, with
// first-sync progress on progress when it is a terminal (`tidings index`). A failing account is
// a logged warning and a failed Result; the others still sync.
func syncMailOnce(ctx context.Context, cfg *config.Config, ix *index.Index, progress io.Writer, logger *slog.Logger) ([]mailindex.Result, error) {
	accts, err := mailindex.NewAccounts(cfg, ix, cfg.Now, mailindex.Options{Progress: mailindex.ProgressLine(progress)})
	if err != nil {
		return nil, err
	}
	defer accts.Close()
	res := accts.Run(ctx)
	for _, r := range res {
		if r.Err != nil {
			logger.Warn("mail sync failed", "account", r.Account, "err", r.Err)
		}
	}
	return res, ctx.Err()
}

// serveIndex opens the index for `tidings serve`, reports its status in
// get_status, and keeps it fresh by watching the configured sources.
func serveIndex(ctx context.Context, env *ServeEnv) error {
	cfg := env.Config
	if cfg.Bridge != "" {
		return nil // the helper owns the index in bridge mode
	}
	srcs, watch, closeSrcs, err := indexSources(ctx, cfg, env.Logger)
	if err != nil {
		env.Logger.Warn("message sources unavailable; serving the index as it is", "err", err)
		srcs, watch, closeSrcs = nil, nil, func() {}
		if se := (*sourceError)(nil); errors.As(err, &se) && env.Deps.Sources == nil {
			env.Deps.Sources = unreadableSources(cfg, se)
		}
	}
	if _, statErr := os.Stat(indexPath(cfg)); len(srcs) == 0 && statErr != nil && len(cfg.Mail.Accounts) == 0 {
		closeSrcs()
		return nil // nothing to serve from yet
	}
	ix, err := openIndex(ctx, cfg, os.Getenv, env.Logger, false)
	if err != nil {
		closeSrcs()
		return err
	}
	env.Index = ix
	accts, err := mailindex.NewAccounts(cfg, ix, cfg.Now, mailindex.Options{})
	if err != nil {
		ix.Close()
		closeSrcs()
		return err
	}
	env.Deps.Index = indexStatus{ix: ix, watching: len(srcs) > 0, mail: accts}
	if env.Deps.DataSet.Kind == "personal" {
		if st, err := ix.Status(ctx); err == nil && st.Messages > 0 {
			env.Deps.DataSet = mcpserver.DataSet{Kind: "personal"}
		}
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if len(srcs) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ix.Watch(wctx, index.WatchOptions{Sources: srcs, Paths: watch}); err != nil && wctx.Err() == nil {
				env.Logger.Error("index sync stopped", "err", err)
			}
		}()
	}
	if accts.Len() > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keepMailSynced(wctx, accts, env.Logger)
		}()
	}
	env.OnClose = append(env.OnClose, func() {
		cancel()
		wg.Wait()
		accts.Close()
		ix.Close()
		closeSrcs()
	})
	return nil
}

// mailSyncEvery is how often serve syncs the mail accounts after the sync
// on start (docs/index.md, "When mail is synced"). IMAP has no cheap
// change notification shared by every server; a few minutes bounds both
// the staleness and the load on the server.
const mailSyncEvery = 5 * time.Minute

// keepMailSynced syncs every mail account now and then every
// mailSyncEvery until ctx ends. A failing account is a logged warning
// (and a get_status note), never the end of the loop.
func keepMailSynced(ctx context.Context, accts *mailindex.Accounts, logger *slog.Logger) {
	t := time.NewTicker(mailSyncEvery)
	defer t.Stop()
	for {
		for _, r := range accts.Run(ctx) {
			switch {
			case r.Err != nil && ctx.Err() == nil:
				logger.Warn("mail sync failed", "account", r.Account, "err", r.Err)
			case r.Err == nil && (r.Stats.New > 0 || r.Stats.Deleted > 0 || r.Stats.Flags > 0):
				logger.Info("mail synced", "account", r.Account, "new", r.Stats.New, "flags", r.Stats.Flags, "deleted", r.Stats.Deleted)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// indexStatus adapts the index to get_status.
type indexStatus struct {
	ix       *index.Index
	watching bool
	mail     *mailindex.Accounts // nil: no mail synced in this process
}

func (s indexStatus) IndexStatus(ctx context.Context) (mcpserver.IndexStatus, error) {
	st, err := s.ix.Status(ctx)
	if err != nil {
		return mcpserver.IndexStatus{}, err
	}
	out := mcpserver.IndexStatus{State: "ready", Path: st.Path, Conversations: st.Conversations, Messages: st.Messages, Contacts: st.Contacts}
	if !st.LastSync.IsZero() {
		t := st.LastSync
		out.LastSync = &t
	} else {
		out.State = "building"
	}
	if !st.NewestMessage.IsZero() {
		t := st.NewestMessage
		out.NewestMessage = &t
	}
	switch {
	case st.Vectors.Embedder == "":
		out.Note = "semantic search off (no embedder); full-text search only"
	case !st.Vectors.Ready:
		out.Note = fmt.Sprintf("semantic search not ready: %d of %d messages embedded; searches use full text meanwhile", st.Vectors.Vectors, st.Vectors.Searchable)
	}
	if !s.watching && (s.mail == nil || s.mail.Len() == 0) {
		out.Note = joinNote(out.Note, "no source is watched in this process, so the index does not update itself")
	}
	if s.mail != nil {
		for _, f := range s.mail.Failed() {
			out.Note = joinNote(out.Note, "mail sync failed for account "+output.Name(f))
		}
	}
	return out, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// checkIndex reports on the index file: present, private, readable.
func checkIndex(ctx context.Context, cfg *config.Config) []mcpserver.CheckResult {
	p := indexPath(cfg)
	fi, err := os.Stat(p)
	if err != nil {
		return []mcpserver.CheckResult{{Name: "index", Status: "warn", Detail: "no index at " + p, Fix: "run tidings index (or tidings serve with a source configured)"}}
	}
	var out []mcpserver.CheckResult
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		out = append(out, mcpserver.CheckResult{Name: "index permissions", Status: "fail", Detail: fmt.Sprintf("%s is mode %o: other users can read your messages", p, perm),
			Fix: "chmod 600 " + p + " && chmod 700 " + filepath.Dir(p)})
	}
	ix, err := index.Open(ctx, p, index.Options{ReadOnly: true, Now: cfg.Now, Location: cfg.Location()})
	if err != nil {
		return append(out, mcpserver.CheckResult{Name: "index", Status: "fail", Detail: err.Error(), Fix: "run tidings index to create or upgrade it"})
	}
	defer ix.Close()
	st, err := ix.Status(ctx)
	if err != nil {
		return append(out, mcpserver.CheckResult{Name: "index", Status: "fail", Detail: err.Error(), Fix: "run tidings index --verify"})
	}
	detail := fmt.Sprintf("%d messages in %d conversations, %.1f MB", st.Messages, st.Conversations, float64(st.SizeBytes)/(1<<20))
	if !st.LastSync.IsZero() {
		detail += ", last sync " + st.LastSync.Format(time.RFC3339)
	}
	return append(out, mcpserver.CheckResult{Name: "index", Status: "ok", Detail: detail})
}
