package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/tidings-mcp/tidings/internal/addressbook"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/android/androidindex"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
)

// The query layer's wiring: one read-policy gate per Tidings home (the
// index is opened with it as its Policy, see openIndex, and the service
// checks every result with it again), the contacts book, the dossier
// store in the index file, and the chat.db reader that finds attachment
// files. serveService runs after the index step (serveSteps, serve.go), which
// opened the index; serveSend runs after it and shares env.Contacts.

// policySource loads the read policy of a folder lazily, so a policy that
// cannot be loaded at start fails the reads (closed) instead of the
// process, and is picked up once fixed.
type policySource struct {
	dir  string
	opts policy.Options // the hardened allowlist, when configured
	mu   sync.Mutex
	st   *policy.Store
}

// Current implements service.PolicySource.
func (p *policySource) Current() (*policy.Policy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == nil {
		st, err := policy.NewStore(p.dir, p.opts)
		if err != nil {
			return nil, err
		}
		p.st = st
	}
	return p.st.Current()
}

var (
	gatesMu  sync.Mutex
	gates    = map[string]*service.Gate{}
	policies = map[string]*policySource{}
)

// homePolicy returns the read policy of cfg's home ($TIDINGS_HOME, where
// `tidings policy` edits contacts/*.txt) under cfg's hardened allowlist,
// one per home, allowlist and process; the read gate and the send gate
// share it.
func homePolicy(cfg *config.Config) *policySource {
	gatesMu.Lock()
	defer gatesMu.Unlock()
	return homePolicyLocked(filepath.Clean(cfg.Home), policyOptions(cfg))
}

// policyOptions are the read-policy options of cfg: the hardened
// allowlist of seed 000 when hardened_allowlist (--hardened-allowlist,
// TIDINGS_HARDENED_ALLOWLIST) names one (docs/security.md, "Hardened read
// policy").
func policyOptions(cfg *config.Config) policy.Options {
	return policy.Options{HardenedAllowlist: cfg.HardenedAllowlist}
}

func policyKey(dir string, opts policy.Options) string { return dir + "\x00" + opts.HardenedAllowlist }

func homePolicyLocked(dir string, opts policy.Options) *policySource {
	p, ok := policies[policyKey(dir, opts)]
	if !ok {
		p = &policySource{dir: dir, opts: opts}
		policies[policyKey(dir, opts)] = p
	}
	return p
}

// policyGate returns the read-policy gate of cfg's home, one per home,
// hardened allowlist and process.
func policyGate(cfg *config.Config) *service.Gate {
	gatesMu.Lock()
	defer gatesMu.Unlock()
	dir, opts := filepath.Clean(cfg.Home), policyOptions(cfg)
	if g, ok := gates[policyKey(dir, opts)]; ok {
		return g
	}
	g := service.NewGate(homePolicyLocked(dir, opts))
	gates[policyKey(dir, opts)] = g
	return g
}

// contactBook returns the person's address book: the configured contacts
// files plus the contact names an Android export carries (an Android-only
// setup still resolves "Alice" to her number), reloaded when any of those
// files changes. With ix non-nil every load is also stored in the index,
// so conversation labels use the same names. nil when there is neither.
func contactBook(cfg *config.Config, ix *index.Index, logger *slog.Logger) *service.FileBook {
	if len(cfg.Contacts) == 0 && len(cfg.AndroidXML) == 0 && len(cfg.ContactAccounts) == 0 {
		return nil
	}
	fb := &service.FileBook{Paths: cfg.Contacts, Region: cfg.Region,
		Logger: func(msg string, args ...any) { logger.Warn(msg, args...) }}
	if len(cfg.AndroidXML) > 0 {
		a := androidindex.New(cfg.AndroidXML, cfg.Region)
		a.Logger = logger
		fb.Sources, fb.SourceFiles = []service.CardSource{a}, cfg.AndroidXML
	}
	// The Contacts service's accounts (docs/contacts.md, "Accounts"):
	// their cards name conversations too; a folder's changes reload the
	// book, a CardDAV account is read at every reload.
	if src, folders := accountCards(cfg, logger); src != nil {
		fb.Sources, fb.SourceFiles = append(fb.Sources, src), append(fb.SourceFiles, folders...)
	}
	if ix != nil {
		fb.OnLoad = func(ctx context.Context, cards map[string][]model.Contact) error {
			for key, cs := range cards {
				if _, err := ix.LoadContacts(ctx, key, cs); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return fb
}

// indexPolicy returns the policy an index is opened with. A writable index
// (one that syncs) is refused while the policy cannot be loaded: syncing
// under a policy that hides every thread would purge the whole index.
func indexPolicy(cfg *config.Config, readOnly bool) (index.Policy, error) {
	g := policyGate(cfg)
	if !readOnly {
		if _, err := g.Refresh(); err != nil {
			return nil, fmt.Errorf("%w (fix it before syncing, e.g. with `tidings policy list`: under a policy that cannot be read every thread is hidden)", err)
		}
	}
	return g, nil
}

// newService builds the query layer over an open index for serve and the
// CLI: $TIDINGS_HOME's read policy, the dossiers in its index file. push
// loads the contacts into the index when the book (re)loads them (a
// writable index only). The returned function releases what it opened.
func newService(ctx context.Context, cfg *config.Config, ix *index.Index, logger *slog.Logger, push bool) (*service.Service, func(), error) {
	return newQueryLayer(ctx, cfg, ix, logger, queryLayerOptions{gate: policyGate(cfg), dossierPath: indexPath(cfg), push: push})
}

// queryLayerOptions are what differs between the owners of a query layer:
// serve and the CLI use $TIDINGS_HOME's read policy and index file, the
// bridge helper the bridge folder's policy and its own index.
type queryLayerOptions struct {
	gate        *service.Gate
	dossierPath string // the index file that also keeps the dossiers
	push        bool   // load the contacts into the index (a writable index)
}

// newQueryLayer is the one builder of the query layer (serve, the CLI and
// the helper), so the in-process and bridge paths answer from the same
// parts: the contacts book, the dossier store, the attachment reader and
// the summary endpoint of cfg.
func newQueryLayer(ctx context.Context, cfg *config.Config, ix *index.Index, logger *slog.Logger, o queryLayerOptions) (*service.Service, func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	opts := service.Options{Index: ix, Gate: o.gate, Now: cfg.Now, Location: cfg.Location(), Region: cfg.Region, Logger: logger, SemanticOff: semanticOff(cfg)}
	pushTo := ix
	if !o.push {
		pushTo = nil
	}
	if fb := contactBook(cfg, pushTo, logger); fb != nil {
		opts.Contacts = fb
	}
	store, err := service.OpenDossierStore(ctx, o.dossierPath, cfg.Now)
	if err != nil {
		logger.Warn("dossiers will not be kept between calls", "err", err)
	} else {
		opts.Dossiers = store
		closers = append(closers, func() { store.Close() })
	}
	if r := attachmentReader(ctx, cfg, logger); r != nil {
		opts.Attachments = r
		closers = append(closers, func() { r.Close() })
	}
	sum, err := dossierSummarizer(cfg)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	opts.Summarizer = sum
	svc, err := service.New(opts)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return svc, closeAll, nil
}

// dossierSummarizer returns the generated-summary endpoint of the
// configuration (dossier_summary_url and dossier_summary_model, the key
// from TIDINGS_DOSSIER_SUMMARY_API_KEY), or nil when none is configured.
// A half or invalid configuration is an error: Tidings never starts on a
// configuration it half understood.
func dossierSummarizer(cfg *config.Config) (service.DossierSummarizer, error) {
	switch {
	case cfg.SummaryURL == "" && cfg.SummaryModel == "":
		return nil, nil
	case cfg.SummaryURL == "" || cfg.SummaryModel == "":
		return nil, errors.New("dossier summary: set both dossier_summary_url and dossier_summary_model (TIDINGS_DOSSIER_SUMMARY_URL/_MODEL), or neither")
	}
	if !cfg.AllowExternal {
		// The endpoint receives message text: external, loopback
		// included (docs/security.md, "Open world").
		return nil, nil
	}
	s, err := dossier.NewSummarizer(dossier.SummaryConfig{URL: cfg.SummaryURL, Model: cfg.SummaryModel, APIKey: cfg.SummaryAPIKey})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// attachmentReader opens the configured message database for attachment
// lookups (save_attachment), or returns nil.
func attachmentReader(ctx context.Context, cfg *config.Config, logger *slog.Logger) *imessage.Reader {
	if cfg.IMessage == "" {
		return nil
	}
	r, err := imessage.Open(ctx, cfg.IMessage, imessage.Options{Logger: logger})
	if err != nil {
		logger.Debug("attachments: message database not readable", "err", err)
		return nil
	}
	return r
}

// serveService gives the tools their query layer, keeps the read policy
// applied (a newly blocked thread is purged within seconds) and keeps the
// stored dossiers living (refreshed after each sync).
func serveService(ctx context.Context, env *ServeEnv) error {
	cfg := env.Config
	if cfg.Bridge != "" {
		return nil // the helper owns the index in bridge mode
	}
	is, ok := env.Deps.Index.(indexStatus)
	if !ok || is.ix == nil {
		return nil // no index in this process: the tools say so
	}
	if !cfg.AllowExternal && cfg.SummaryURL != "" {
		// dossierSummarizer builds none: the endpoint is external.
		env.Logger.Info("generated dossier summaries off: allow_external = false", "from", cfg.Origins["allow_external"])
	}
	svc, closeSvc, err := newService(ctx, cfg, is.ix, env.Logger, true)
	if err != nil {
		return fmt.Errorf("query layer: %w", err)
	}
	env.Deps.Messages = svc
	env.Contacts = svc.Contacts()
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		svc.WatchPolicy(bctx, 2*time.Second)
	}()
	go func() {
		defer wg.Done()
		refreshDossiers(bctx, svc, env.Logger, 30*time.Second)
	}()
	env.OnClose = append(env.OnClose, func() {
		cancel()
		wg.Wait()
		closeSvc()
	})
	return nil
}

// refreshDossiers brings the stored dossiers up to date whenever the index
// has synced since the last round.
func refreshDossiers(ctx context.Context, svc *service.Service, logger *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ls, err := svc.LastSync(ctx)
		if err != nil || !ls.After(last) {
			continue
		}
		last = ls
		if n, err := svc.RefreshDossiers(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("dossiers not refreshed", "err", err)
		} else if n > 0 {
			logger.Debug("dossiers refreshed", "count", n)
		}
	}
}

// accountCards is the [[contacts.accounts]] entries as a card source of
// the contact book, with the folders whose changes reload it; nil when
// there is none (or the accounts are misconfigured, which the Contacts
// service reports).
func accountCards(cfg *config.Config, logger *slog.Logger) (service.CardSource, []string) {
	if len(cfg.ContactAccounts) == 0 {
		return nil, nil
	}
	st, err := addressbook.StoreFromConfig(cfg, cfg.Now)
	if err != nil {
		logger.Warn("contacts accounts are not read into the contact book", "err", err)
		return nil, nil
	}
	return addressbook.BookSource{Store: st}, st.Folders()
}
