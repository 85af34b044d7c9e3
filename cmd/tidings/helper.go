package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/app"
	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail/mailindex"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/send"
	"github.com/tidings-mcp/tidings/internal/service"
)

func init() {
	register(command{
		name:    "helper",
		summary: "the bridge worker: answer bridge requests in --bridge-dir (--once drains the queue, --watch stays up)",
		run:     runHelper,
	})
}

// helperFlags are the settings the helper reads like `tidings serve` does.
var helperFlags = []string{"home", "region", "imessage", "ios-backup", "android-xml", "contacts", "log-level", "embedder", "embedder-url", "embedder-model",
	"hardened-allowlist"}

const helperUsage = `Usage: tidings helper --bridge-dir DIR [--once | --watch] [flags]

Serves the file bridge (protocol 1.2, plus the 1.3 extension) in DIR: reads
DIR/control/requests/request-<id>.json, writes DIR/control/responses/response-<id>.json.
--once answers every queued request and exits (what launchd/systemd start on
demand); --watch stays up and answers new requests within milliseconds.

The role comes from IMESSAGE_BRIDGE_ROLE: unset = host, "manager" = the
policy-management bridge; any other value serves nothing. The data comes from
the same settings as tidings serve (TIDINGS_HOME, config.toml, --imessage, …);
the read policy from DIR/contacts/. On macOS this is the one process that needs
Full Disk Access. Diagnostics go to DIR/control/log.txt (never message content).

Flags:
`

// bridgeDirFlag resolves --bridge-dir: the flag, else TIDINGS_BRIDGE /
// config's bridge, else $TIDINGS_HOME/bridge.
func bridgeDirFor(flagValue string, cfg *config.Config) string {
	switch {
	case flagValue != "":
		return flagValue
	case cfg.Bridge != "":
		return cfg.Bridge
	}
	return cfg.Path("bridge")
}

func runHelper(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("helper", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { fmt.Fprint(m.Stderr, helperUsage); fs.PrintDefaults() }
	dirFlag := fs.String("bridge-dir", "", "the bridge folder (default: TIDINGS_BRIDGE, else $TIDINGS_HOME/bridge)")
	once := fs.Bool("once", false, "answer every queued request, then exit (default)")
	watch := fs.Bool("watch", false, "stay up and answer requests as they arrive")
	indexFlag := fs.String("index", "", "the helper's own index (default: ~/Library/Messages/Tidings/index.db on macOS, where Full Disk Access guards it; DIR/index.db elsewhere)")
	loader := config.Bind(fs, helperFlags...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("helper takes no arguments (got %q)", fs.Args())}
	}
	if *once && *watch {
		return usageError{"--once and --watch exclude each other"}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	logger := newLogger(m.Stderr, cfg.LogLevel)
	dir, err := filepath.Abs(bridgeDirFor(*dirFlag, cfg))
	if err != nil {
		return err
	}
	h := &helperData{cfg: cfg, dir: dir, logger: logger, getenv: m.Getenv, watch: *watch, index: helperIndexPath(*indexFlag, dir, m.Getenv),
		readyWait: helperReadyWait}
	tools, err := helperTools(ctx, cfg, logger, h.currentIndex)
	if err != nil {
		return err
	}
	defer tools.Close()
	h.tools = tools
	w, err := bridge.NewWorker(bridge.Options{
		Dir:           dir,
		Role:          m.Getenv(bridge.RoleEnv),
		Open:          h.open,
		Status:        h.status,
		StatusExtra:   h.statusExtra,
		Extensions:    helperExtensions(h),
		HelperVersion: Version,
		CodeRoot:      codeRoot(),
		Logger:        logger,
	})
	if err != nil {
		return err
	}
	defer w.Close()
	if *watch {
		logger.Info("tidings helper watching", "bridge", dir, "role", w.Role())
		return w.Watch(ctx)
	}
	st, err := w.Drain(ctx)
	logger.Debug("tidings helper drained", "answered", st.Answered, "errors", st.Errors, "reaped", st.Reaped)
	if err != nil {
		return err
	}
	// A first sync that outlasted the requests: stay until it is done.
	return h.finishBuild(ctx, w)
}

// helperReadyWait is how long a data request waits for the index's
// running sync before it is answered "being built, retry shortly" (tests
// shorten it).
var helperReadyWait = defaultReadyWait

// codeRoot is the folder holding the helper binary (status' code_root).
func codeRoot() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// helperData opens the helper's data on demand: the worker calls open only
// for an action the role permits, so a refused request opens nothing.
type helperData struct {
	cfg    *config.Config
	dir    string
	logger *slog.Logger
	getenv func(string) string
	watch  bool   // --watch: keep the index synced in the background
	index  string // the helper's index file
	// readyWait bounds a data request's wait for a running sync.
	readyWait time.Duration

	buildMu sync.Mutex
	build   *indexBuild  // the index's background sync, once opened
	ix      *index.Index // the helper's index while it is open

	storeMu sync.Mutex
	store   *policy.Store // the bridge folder's read policy, once loaded

	// tools runs the Bridged tools of app.Services for `serve --bridge`.
	tools *mcpserver.BridgedServer
}

// helperTools builds the services of app.Services exactly as serve does
// (app.BuildServices, app.NewServiceEnv) and an in-process MCP server of
// their Bridged tools, which the helper's 1.3 actions of the same names
// call: serve --bridge and serve in-process run one code path.
func helperTools(ctx context.Context, cfg *config.Config, logger *slog.Logger, ix func(context.Context) (*index.Index, error)) (*mcpserver.BridgedServer, error) {
	env := app.NewServiceEnv(cfg, logger, nil)
	env.Index = ix // mail_search reads the helper's index (mail is synced into it)
	svcs, err := app.BuildServices(env, app.Services)
	if err != nil {
		return nil, err
	}
	return mcpserver.NewBridgedServer(ctx, &mcpserver.Deps{Config: cfg, Version: Version, Now: cfg.Now, Logger: logger}, svcs...)
}

// policy returns the bridge folder's read-policy store. A store reloads
// its files when they change; one that failed to load is tried again on
// the next call (fail closed meanwhile).
func (h *helperData) policy() (*policy.Store, error) {
	h.storeMu.Lock()
	defer h.storeMu.Unlock()
	if h.store == nil {
		st, err := policy.NewStore(h.dir, policyOptions(h.cfg))
		if err != nil {
			return nil, err
		}
		h.store = st
	}
	return h.store, nil
}

// helperIndexPath is where the helper keeps its index. An index is a copy
// of message content, so on macOS it lives under ~/Library/Messages, which
// only a process with Full Disk Access (the helper) can read; elsewhere in
// the bridge folder (0700). It is not $TIDINGS_HOME/index.db: that one
// follows $TIDINGS_HOME's read policy, the helper's follows the bridge
// folder's.
func helperIndexPath(flagValue, bridgeDir string, getenv func(string) string) string {
	if flagValue != "" {
		if abs, err := filepath.Abs(flagValue); err == nil {
			return abs
		}
		return flagValue
	}
	if runtime.GOOS == "darwin" && getenv("HOME") != "" {
		return filepath.Join(getenv("HOME"), "Library", "Messages", "Tidings", "index.db")
	}
	return filepath.Join(bridgeDir, "index.db")
}

// hostBackend builds the host role's backend: the send gate (state and
// nonces in the bridge folder, protocol 1.2's nonces/; the bridge folder's
// read policy) and the query layer (hostData).
func hostBackend(ctx context.Context, h *helperData) (bridge.Backend, error) {
	store, err := h.policy()
	if err != nil {
		return nil, err // fail closed: no read and no send without a policy
	}
	hb := &bridge.HostBackend{}
	var names send.NameResolver
	if fb := contactBook(h.cfg, nil, h.logger); fb != nil {
		names = bookNames{fb}
	}
	gcfg := *h.cfg
	gcfg.Home = h.dir
	if gate, err := send.FromConfig(&gcfg, store, names, nil, h.logger); err != nil {
		h.logger.Error("send gate unavailable", "err", err)
	} else {
		hb.Gate = &bridge.SendGate{Gate: gate}
	}
	if hostData != nil {
		data, closeData, err := hostData(ctx, h, store)
		if err != nil {
			return nil, err
		}
		hb.Data = data
		if closeData != nil {
			hb.Closers = append(hb.Closers, closeData)
		}
	}
	return hb, nil
}

// hostData opens the query layer for the host role (openHostData).
var hostData = openHostData

// openHostData opens the helper's index under the bridge folder's read
// policy (blocked threads never enter it; a policy that cannot be read
// refuses the sync rather than purge everything), syncs the configured
// sources (once per --once run; continuously with --watch) and builds the
// query layer on it.
func openHostData(ctx context.Context, h *helperData, store *policy.Store) (bridge.Backend, func(), error) {
	cfg := h.cfg
	gate := service.NewGate(store)
	if _, err := gate.Refresh(); err != nil {
		return nil, nil, fmt.Errorf("read policy of %s: %w", h.dir, err)
	}
	emb, err := newEmbedder(ctx, cfg, h.getenv)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(h.index), 0o700); err != nil {
		return nil, nil, fmt.Errorf("index folder: %w", err)
	}
	ix, err := index.Open(ctx, h.index, index.Options{Embedder: emb, Now: cfg.Now, Location: cfg.Location(), NormalizeHandle: normalizer(cfg),
		Logger: h.logger, Policy: gate})
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { ix.Close() })
	closers = append(closers, func() { h.setIndex(nil, nil) }) // before the index closes
	srcs, watchPaths, closeSrcs, err := indexSources(ctx, cfg, h.logger)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	closers = append(closers, closeSrcs)
	svc, closeSvc, err := newQueryLayer(ctx, cfg, ix, h.logger, queryLayerOptions{gate: gate, dossierPath: h.index, push: true})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	closers = append(closers, closeSvc)
	if book := svc.Contacts(); book != nil {
		if _, err := book.Book(ctx); err != nil { // loads the cards into the index
			h.logger.Warn("contacts", "err", err)
		}
	}
	// Sync in the background: a data request waits for it at most
	// readyWait and is otherwise told how far it got (helper_build.go).
	// With --watch the index's watcher takes over once it has synced.
	accts, err := mailindex.NewAccounts(cfg, ix, cfg.Now, mailindex.Options{})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	closers = append(closers, accts.Close)
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var watchers sync.WaitGroup
	var watchOnce sync.Once
	syncAll := syncIndex(ix, srcs)
	build := newIndexBuild(bctx, h.logger, func(ctx context.Context, p *buildProgress) error {
		if accts.Len() > 0 {
			// Mail syncs beside the messages, as in serve (keepMailSynced):
			// once per run, every mailSyncEvery with --watch.
			watchers.Add(1)
			go func() {
				defer watchers.Done()
				if h.watch {
					keepMailSynced(ctx, accts, h.logger)
					return
				}
				for _, r := range accts.Run(ctx) {
					if r.Err != nil && ctx.Err() == nil {
						h.logger.Warn("mail sync failed", "account", r.Account, "err", r.Err)
					}
				}
			}()
		}
		if len(srcs) == 0 {
			return nil
		}
		if err := syncAll(ctx, p); err != nil {
			return err
		}
		if h.watch {
			watchOnce.Do(func() {
				watchers.Add(1)
				go func() {
					defer watchers.Done()
					if err := ix.Watch(ctx, index.WatchOptions{Sources: srcs, Paths: watchPaths}); err != nil && ctx.Err() == nil {
						h.logger.Error("index sync stopped", "err", err)
					}
				}()
			})
		}
		return nil
	})
	closers = append(closers, func() { cancel(); build.close(); watchers.Wait() })
	h.setIndex(build, ix)
	return &hostIndexData{ServiceData: &bridge.ServiceData{S: svc, Now: cfg.Now, Location: cfg.Location()}, build: build, wait: h.readyWait}, closeAll, nil
}

// helperExtensions returns the protocol 1.3 actions: every MCP message
// tool, served from the helper's query layer once its index has synced,
// and every Bridged service tool (helperTools).
func helperExtensions(h *helperData) []bridge.Extension {
	exts := bridge.ServiceExtensions(hostService)
	if h.tools != nil {
		for _, t := range h.tools.Tools {
			name := t.Name
			exts = append(exts, bridge.ToolExtension(name, func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				return h.tools.Call(ctx, name, args)
			}))
		}
	}
	return exts
}

func (h *helperData) open(ctx context.Context, role bridge.Role) (bridge.Backend, error) {
	if role == bridge.RoleManager {
		return h.managerBackend(ctx)
	}
	return hostBackend(ctx, h)
}

// managerBackend opens chat.db for list_chats and the contact book for
// labels and an unfiltered contacts_lookup: the same book serve names
// conversations from (contactBook: the contacts sources, an Android
// export's names and the [[contacts.accounts]] cards, docs/bridge.md).
func (h *helperData) managerBackend(ctx context.Context) (bridge.Backend, error) {
	m := &bridge.ManagerBackend{Now: h.cfg.Now, Location: h.cfg.Location()}
	if h.cfg.IMessage != "" {
		db, err := bridge.OpenChatDB(ctx, h.cfg.IMessage)
		if err != nil {
			return nil, err
		}
		m.Chats = db
	}
	if fb := contactBook(h.cfg, nil, h.logger); fb != nil {
		book, err := fb.Book(ctx)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.Contacts = book
	}
	return m, nil
}

// status reports policy metadata and local checks without opening any
// database: the messages database is only opened as a file to prove it
// is readable (Full Disk Access).
func (h *helperData) status(ctx context.Context) bridge.StatusDetails {
	det := bridge.StatusDetails{Checks: map[string]bool{}}
	if store, err := h.policy(); err != nil {
		det.Policy = bridge.PolicyStatus{Error: err.Error()}
	} else if p, err := store.Current(); err != nil {
		det.Policy = bridge.PolicyStatus{Error: err.Error()}
	} else {
		info := p.Info()
		det.Policy = bridge.PolicyStatus{Mode: string(info.Mode), Hardened: info.Hardened, BlockedEntries: info.BlockedEntries,
			AllowedEntries: info.AllowedEntries, Fingerprint: info.Fingerprint}
	}
	det.Checks[bridge.CheckDatabase] = readable(h.cfg.IMessage) || readable(h.cfg.IOSBackup)
	det.Checks[bridge.CheckConfirmation] = confirmerAvailable(h.getenv)
	return det
}

// statusExtra is what a 1.3 status adds: the helper's index, as it is now.
func (h *helperData) statusExtra(ctx context.Context) map[string]any {
	return map[string]any{"index": h.indexStatus(ctx)}
}

// statusIndexWait bounds how long status waits for the index's figures:
// status answers at once, even while a sync holds the index.
const statusIndexWait = time.Second

// indexStatus reports the helper's index for a 1.3 status, as it is now:
// "absent" until a data request opened it (status never opens it),
// "building" while its first sync runs (with the progress), else its
// counts and freshness. It reads no message content.
func (h *helperData) indexStatus(ctx context.Context) mcpserver.IndexStatus {
	h.buildMu.Lock()
	b, ix := h.build, h.ix
	h.buildMu.Unlock()
	if ix == nil {
		return mcpserver.IndexStatus{State: "absent", Path: h.index,
			Note: "the helper opens its index on the first data request (status never opens it)"}
	}
	type answer struct {
		st  mcpserver.IndexStatus
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		st, err := indexStatus{ix: ix, watching: h.watch}.IndexStatus(ctx)
		ch <- answer{st, err}
	}()
	var st mcpserver.IndexStatus
	select {
	case a := <-ch:
		if a.err != nil {
			return mcpserver.IndexStatus{State: "error", Path: h.index, Note: "index status unavailable: " + a.err.Error()}
		}
		st = a.st
	case <-time.After(statusIndexWait):
		st = mcpserver.IndexStatus{State: "building", Path: h.index, Note: "the index is busy syncing; ask again shortly"}
	}
	if b != nil {
		if running, progress := b.progress(); running {
			st.State = "building"
			st.Note = joinNote("sync running ("+progress+")", st.Note)
		}
	}
	return st
}

// currentIndex is the helper's index once a host request opened it.
func (h *helperData) currentIndex(context.Context) (*index.Index, error) {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	if h.ix == nil {
		return nil, errors.New("the helper has not opened its index yet: ask again once a message tool has answered")
	}
	return h.ix, nil
}

func (h *helperData) setIndex(b *indexBuild, ix *index.Index) {
	h.buildMu.Lock()
	h.build, h.ix = b, ix
	h.buildMu.Unlock()
}

// readable reports whether path can be opened for reading (no content is
// read).
func readable(path string) bool {
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// confirmerAvailable reports whether a native send confirmation can be
// shown: osascript on macOS, zenity or kdialog with a display elsewhere.
func confirmerAvailable(getenv func(string) string) bool {
	if runtime.GOOS == "darwin" {
		_, err := exec.LookPath("osascript")
		return err == nil
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return false
	}
	for _, p := range []string{"zenity", "kdialog"} {
		if _, err := exec.LookPath(p); err == nil {
			return true
		}
	}
	return false
}
