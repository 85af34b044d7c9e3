//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Runtime layout inside the bridge folder (docs/bridge.md, "Folder
// layout"), plus the worker's lock file and id record in control/.
const (
	ControlDir   = "control"
	RequestsDir  = "requests"
	ResponsesDir = "responses"
	NoncesDir    = "nonces"
	ContactsDir  = "contacts"
	LogName      = "log.txt"
	lockName     = "worker.lock"
	maxLogSize   = 4 << 20
)

// Defaults for [Options].
const (
	DefaultResponseTTL = time.Hour
	DefaultTempTTL     = 10 * time.Minute
	// DefaultNonceMaxAge: a send-preview nonce is valid for 60 s (seed:
	// send_nonce_ttl_seconds); a file in nonces/ older than this is dead.
	DefaultNonceMaxAge = 10 * time.Minute
	DefaultRescan      = 2 * time.Second
	DefaultReapEvery   = time.Minute
	DefaultParallel    = 4
)

// Options configure a [Worker].
type Options struct {
	// Dir is the bridge folder.
	Dir string
	// Role is IMESSAGE_BRIDGE_ROLE's raw value (see ParseRole). An
	// unknown value does not stop the worker: it answers every request
	// with an error, so clients learn why instead of timing out.
	Role string
	// Open returns the data backend for role. The worker calls it only
	// for an action the role permits, after the parameters validated, and
	// caches a success; a failure is reported to that request and retried
	// on the next one (Full Disk Access may have been granted meanwhile).
	Open func(ctx context.Context, role Role) (Backend, error)
	// Status adds policy metadata and checks to status; optional.
	Status func(ctx context.Context) StatusDetails
	// StatusExtra adds fields to a 1.3 status (the helper's index); it is
	// called for 1.3 requests only, so a 1.2 status never pays for it.
	StatusExtra func(ctx context.Context) map[string]any
	// Extensions are the protocol 1.3 actions.
	Extensions []Extension
	// HelperVersion and CodeRoot are reported by status.
	HelperVersion string
	CodeRoot      string
	// Logger receives the same diagnostics as control/log.txt (which never
	// contain message content); nil means log.txt only.
	Logger *slog.Logger
	// Now is the clock for reaping; nil means time.Now.
	Now func() time.Time
	// Parallel is how many requests are answered at once (default 4; 1
	// answers strictly one after the other). Requests always start oldest
	// first.
	Parallel int
	// ResponseTTL: responses older than this are reaped (default 1 h).
	// TempTTL: temp files older than this are reaped (default 10 min).
	// Rescan: Watch's safety-net rescan period (default 2 s).
	// ReapEvery: how often Watch reaps (default 1 min; Drain always does).
	// NonceMaxAge: files in nonces/ older than this are reaped (default
	// 10 min; protocol 1.2's nonces are "TTL-reaped on every helper run").
	ResponseTTL, TempTTL, Rescan, ReapEvery, NonceMaxAge time.Duration
}

// Worker serves a bridge folder. Create it with NewWorker; call Drain (the
// --once mode) or Watch (the --watch mode); Close it when done. Its
// methods must not be called concurrently; run several workers (processes
// or Worker values) instead, which the lock file serializes.
type Worker struct {
	opts    Options
	role    Role
	roleErr error

	root, control, requests, responses, nonces *dir

	lock    *os.File
	ids     *idRecord
	logFile *os.File
	log     *slog.Logger

	mu       sync.Mutex // guards backend
	backend  Backend
	lastReap time.Time
	// recMu guards the id record, stuck and Stats while requests are
	// answered in parallel.
	recMu sync.Mutex
	stuck map[string]bool // requests that could not be removed (logged once)
	// unsafeErr is the refusal in force (empty while the runtime
	// directories are safe) and unsafeLogged when it was last logged.
	unsafeErr    string
	unsafeLogged time.Time
	// pause, when set (tests), runs between the steps of answering, to
	// widen the windows a crash test kills the worker in.
	pause func()
	// passed, when set (tests), is called after every Watch pass with its
	// error, so a test can count passes instead of sleeping.
	passed func(error)
}

// Stats counts what one Drain did.
type Stats struct {
	Answered   int // responses written (errors included)
	Errors     int // of which error responses
	Duplicates int // requests refused because their id was used before
	Recovered  int // requests finished after a crash without answering again
	Dropped    int // unanswerable files removed (invalid id in the name)
	Reaped     int // old responses and stale temp files removed
}

// NewWorker opens and checks the bridge folder: the folder and its runtime
// directories (control, control/requests, control/responses, nonces) must
// be real directories owned by the current user with no group or world
// permissions; missing ones are created with mode 0700, existing ones are
// never changed. It opens the lock file, the id record and control/log.txt
// without following symlinks.
func NewWorker(o Options) (*Worker, error) {
	if o.Dir == "" {
		return nil, errors.New("bridge worker: no bridge folder given")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("bridge folder: %w", err)
	}
	o.Dir = abs
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ResponseTTL <= 0 {
		o.ResponseTTL = DefaultResponseTTL
	}
	if o.TempTTL <= 0 {
		o.TempTTL = DefaultTempTTL
	}
	if o.NonceMaxAge <= 0 {
		o.NonceMaxAge = DefaultNonceMaxAge
	}
	if o.Rescan <= 0 {
		o.Rescan = DefaultRescan
	}
	if o.ReapEvery <= 0 {
		o.ReapEvery = DefaultReapEvery
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	names := map[string]bool{}
	for _, e := range o.Extensions {
		if _, clash := roleTable[e.Name]; clash || names[e.Name] || e.Name == "" || e.Handle == nil {
			return nil, fmt.Errorf("bridge worker: invalid or duplicate extension action %q", e.Name)
		}
		names[e.Name] = true
	}
	w := &Worker{opts: o}
	w.role, w.roleErr = ParseRole(o.Role)
	if err := w.openDirs(); err != nil {
		w.Close()
		return nil, err
	}
	if w.lock, err = w.control.openPrivate(lockName, oRDWR); err != nil {
		w.Close()
		return nil, fmt.Errorf("bridge lock file: %w", err)
	}
	if w.ids, err = openIDRecord(w.control); err != nil {
		w.Close()
		return nil, err
	}
	w.log = w.openLog()
	if w.roleErr != nil {
		w.log.Error("bridge role", "err", w.roleErr)
	}
	return w, nil
}

// runtimeDirs are the five runtime directories, opened and checked.
type runtimeDirs struct {
	root, control, requests, responses, nonces *dir
}

func (r runtimeDirs) close() {
	for _, d := range []*dir{r.nonces, r.responses, r.requests, r.control, r.root} {
		if d != nil {
			d.close()
		}
	}
}

// openRuntimeDirs opens and checks the runtime directories under root,
// creating missing ones 0700. It is all or nothing: on an error every
// directory it opened is closed again.
func openRuntimeDirs(root string) (runtimeDirs, error) {
	var r runtimeDirs
	var err error
	fail := func(err error) (runtimeDirs, error) {
		r.close()
		return runtimeDirs{}, err
	}
	if r.root, err = openDir(nil, root, true); err != nil {
		return fail(err)
	}
	if r.control, err = openDir(r.root, ControlDir, true); err != nil {
		return fail(err)
	}
	if r.requests, err = openDir(r.control, RequestsDir, true); err != nil {
		return fail(err)
	}
	if r.responses, err = openDir(r.control, ResponsesDir, true); err != nil {
		return fail(err)
	}
	if r.nonces, err = openDir(r.root, NoncesDir, true); err != nil {
		return fail(err)
	}
	return r, nil
}

// dirs returns the worker's current runtime directories.
func (w *Worker) dirs() runtimeDirs {
	return runtimeDirs{w.root, w.control, w.requests, w.responses, w.nonces}
}

// setDirs replaces the worker's runtime directories, closing the old ones.
func (w *Worker) setDirs(r runtimeDirs) {
	w.dirs().close()
	w.root, w.control, w.requests, w.responses, w.nonces = r.root, r.control, r.requests, r.responses, r.nonces
}

func (w *Worker) openDirs() error {
	r, err := openRuntimeDirs(w.opts.Dir)
	if err != nil {
		return err
	}
	w.setDirs(r)
	return nil
}

// openLog opens control/log.txt (O_NOFOLLOW, 0600, regular, one link),
// rotating it to log.txt.1 past 4 MiB. When it cannot be opened safely the
// worker logs to Options.Logger only and status reports log_file false.
func (w *Worker) openLog() *slog.Logger {
	handlers := []slog.Handler{}
	if w.opts.Logger != nil {
		handlers = append(handlers, w.opts.Logger.Handler())
	}
	if fi, err := w.control.lstat(LogName); err == nil && fi.isRegular() && fi.size > maxLogSize {
		_ = w.control.rename(LogName, LogName+".1")
	}
	f, err := w.control.openPrivate(LogName, oWRONLY|oAPPEND)
	if err != nil {
		if w.opts.Logger != nil {
			w.opts.Logger.Error("control/log.txt not opened; logging to stderr only", "err", err)
		}
	} else {
		w.logFile = f
		handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(fanout(handlers))
}

// Close releases the worker's files and closes the backend if it has a
// Close method.
func (w *Worker) Close() error {
	w.mu.Lock()
	if c, ok := w.backend.(io.Closer); ok {
		c.Close()
	}
	w.backend = nil
	w.mu.Unlock()
	for _, f := range []*os.File{w.lock, w.logFile} {
		if f != nil {
			f.Close()
		}
	}
	if w.ids != nil {
		w.ids.close()
	}
	w.dirs().close()
	return nil
}

// Role returns the role the worker enforces (RoleInvalid when
// IMESSAGE_BRIDGE_ROLE was not understood).
func (w *Worker) Role() Role { return w.role }

// RequestsPath is the folder clients write to (what Watch and the
// installers watch).
func (w *Worker) RequestsPath() string { return w.requests.path }

// acquire takes the worker lock, polling so ctx can cancel the wait.
func (w *Worker) acquire(ctx context.Context) error {
	delay := time.Millisecond
	for {
		ok, err := tryLockFile(w.lock)
		if err != nil {
			return fmt.Errorf("bridge lock: %w", err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 20*time.Millisecond)
	}
}

// Drain processes every queued request, oldest first, then reaps old
// responses and stale temp files; it holds the worker lock throughout, so
// concurrent workers take turns and never answer a request twice. It is
// the --once mode. A request that cannot be answered because ctx was
// cancelled stays queued for the next run.
func (w *Worker) Drain(ctx context.Context) (Stats, error) {
	var st Stats
	if err := w.acquire(ctx); err != nil {
		return st, err
	}
	defer func() { unlockFile(w.lock) }() // reopen may have replaced it
	err := w.checkDirs()
	if errors.Is(err, ErrUnsafe) {
		w.noteSafety(err)
		return st, err
	}
	if err != nil {
		return st, err
	}
	w.noteSafety(nil)
	if err := w.ids.refresh(); err != nil {
		return st, err
	}
	queue, err := w.queue()
	if err != nil {
		return st, err
	}
	if err := w.answerAll(ctx, queue, &st); err != nil {
		return st, err
	}
	if now := w.opts.Now(); now.Sub(w.lastReap) >= w.opts.ReapEvery || w.lastReap.IsZero() {
		w.reap(now, &st)
		w.lastReap = now
	}
	return st, nil
}

// answerAll answers the queued requests, up to Parallel at once, starting
// them oldest first. The first error stops new starts; the requests in
// hand finish.
func (w *Worker) answerAll(ctx context.Context, queue []string, st *Stats) error {
	if w.opts.Parallel <= 1 {
		for _, name := range queue {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := w.handleFile(ctx, name, st); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	failed := func() error {
		errMu.Lock()
		defer errMu.Unlock()
		return firstErr
	}
	sem := make(chan struct{}, w.opts.Parallel)
	for _, name := range queue {
		if ctx.Err() != nil || failed() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := w.handleFile(ctx, name, st); err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := failed(); err != nil {
		return err
	}
	return ctx.Err()
}

// count updates the pass statistics.
func (w *Worker) count(f func()) {
	w.recMu.Lock()
	f()
	w.recMu.Unlock()
}

// checkDirs re-verifies the runtime directories; one that was replaced is
// reopened (and checked again), one that became unsafe stops the pass. A
// failed reopen keeps the directories the worker had (still open, never
// used for this pass), so the next pass checks the paths again and serves
// as soon as they are safe (docs/bridge.md, "The worker").
func (w *Worker) checkDirs() error {
	for _, d := range []*dir{w.root, w.control, w.requests, w.responses, w.nonces} {
		err := d.recheck()
		if errors.Is(err, errMoved) {
			if w.unsafeErr == "" {
				w.log.Warn("bridge directory replaced; reopening", "path", d.path)
			}
			return w.reopen()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// reopen opens the runtime directories afresh. It changes nothing until
// everything is open and checked: the directories, and, when control/ is
// another directory now, its lock (taken before the old one is given up)
// and id record.
func (w *Worker) reopen() error {
	r, err := openRuntimeDirs(w.opts.Dir)
	if err != nil {
		return err
	}
	if r.control.info.same(w.control.info) {
		w.setDirs(r) // control/ itself is the same: keep the lock and the id record
		return nil
	}
	lock, err := r.control.openPrivate(lockName, oRDWR)
	if err != nil {
		r.close()
		return fmt.Errorf("bridge lock file: %w", err)
	}
	ids, err := openIDRecord(r.control)
	if err != nil {
		lock.Close()
		r.close()
		return err
	}
	if ok, err := tryLockFile(lock); err != nil || !ok {
		lock.Close()
		ids.close()
		r.close()
		return fmt.Errorf("bridge lock: busy after the folder was replaced; retrying on the next pass")
	}
	w.setDirs(r)
	w.lock.Close()
	w.ids.close()
	w.lock, w.ids = lock, ids
	return w.ids.refresh()
}

// unsafeLogEvery is how often a refusal that goes on is logged again.
const unsafeLogEvery = 10 * time.Minute

// noteSafety logs the runtime directories' state after a check: a refusal
// when it starts, when its reason changes and then every unsafeLogEvery
// (not once per poll: --watch checks every 2 s), and the recovery.
func (w *Worker) noteSafety(err error) {
	now := w.opts.Now()
	if err == nil {
		if w.unsafeErr != "" {
			w.log.Info("bridge folder safe again; serving")
			w.unsafeErr = ""
		}
		return
	}
	if msg := err.Error(); msg != w.unsafeErr || now.Sub(w.unsafeLogged) >= unsafeLogEvery {
		w.log.Error("refusing to serve until the bridge folder is safe again; nothing is read from or written to it meanwhile", "err", err)
		w.unsafeErr, w.unsafeLogged = msg, now
	}
}

type queued struct {
	name  string
	mtime time.Time
}

// queue lists request-*.json files, oldest first (by modification time,
// then name).
func (w *Worker) queue() ([]string, error) {
	names, err := w.requests.names()
	if err != nil {
		return nil, err
	}
	var q []queued
	for _, n := range names {
		if _, ok := idFromRequestName(n); !ok {
			continue
		}
		fi, err := w.requests.lstat(n)
		if err != nil {
			continue // withdrawn meanwhile
		}
		q = append(q, queued{n, fi.mtime})
	}
	slices.SortFunc(q, func(a, b queued) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, len(q))
	for i, e := range q {
		out[i] = e.name
	}
	return out, nil
}

// handleFile answers one request file. An error return stops the pass
// (the request stays queued); problems with the request itself are
// answered, never returned.
func (w *Worker) handleFile(ctx context.Context, name string, st *Stats) error {
	id, _ := idFromRequestName(name)
	if !ValidID(id) {
		// No safe place to answer: the id would become part of a file name.
		w.log.Warn("removing request with an invalid id in its file name", "file", excerpt(name))
		if err := w.requests.remove(name); err == nil {
			w.count(func() { st.Dropped++ })
		}
		return nil
	}
	fi, err := w.requests.lstat(name)
	if err != nil {
		return nil // withdrawn by the client
	}
	ident := identity(fi)
	w.recMu.Lock()
	prev, seen := w.ids.lookup(id)
	w.recMu.Unlock()
	if seen {
		if prev == ident {
			return w.recover(id, name, st)
		}
		return w.refuseDuplicate(id, name, st)
	}

	start := time.Now()
	req, body := w.answer(ctx, id, name, fi)
	if ctx.Err() != nil {
		return ctx.Err() // leave the request for the next worker
	}
	tmp := tempName(id)
	if err := w.responses.prepare(tmp, body.data); err != nil {
		return fmt.Errorf("write response for %s: %w", id, err)
	}
	w.step()
	w.recMu.Lock()
	err = w.ids.add(id, ident)
	w.recMu.Unlock()
	if err != nil {
		_ = w.responses.remove(tmp)
		return err
	}
	w.step()
	if err := w.responses.rename(tmp, ResponseName(id)); err != nil {
		return fmt.Errorf("publish response for %s: %w", id, err)
	}
	w.step()
	w.removeRequest(id, name)
	w.count(func() {
		st.Answered++
		if body.code != "" {
			st.Errors++
		}
	})
	if body.code != "" {
		w.log.Info("request", "id", id, "action", excerpt(req.Action), "ok", false, "error_code", body.code,
			"ms", float64(time.Since(start).Microseconds())/1000)
		return nil
	}
	w.log.Info("request", "id", id, "action", req.Action, "ok", true, "bytes", len(body.data),
		"ms", float64(time.Since(start).Microseconds())/1000)
	return nil
}

func (w *Worker) step() {
	if w.pause != nil {
		w.pause()
	}
}

func tempName(id string) string { return "." + ResponseName(id) + ".tmp" }

// recover finishes a request whose answer was prepared before a crash:
// publish the prepared response if it was not yet, then remove the
// request. It never answers twice.
func (w *Worker) recover(id, name string, st *Stats) error {
	tmp := tempName(id)
	if fi, err := w.responses.lstat(tmp); err == nil && fi.isRegular() {
		if err := w.responses.rename(tmp, ResponseName(id)); err != nil {
			return fmt.Errorf("publish recovered response for %s: %w", id, err)
		}
	}
	w.removeRequest(id, name)
	w.count(func() { st.Recovered++ })
	w.log.Info("finished a request answered before a restart", "id", id)
	return nil
}

// refuseDuplicate answers a request whose id was used before in this
// folder. An unread response for that id is never overwritten: then the
// duplicate is only removed.
func (w *Worker) refuseDuplicate(id, name string, st *Stats) error {
	w.count(func() { st.Duplicates++ })
	w.log.Warn("refusing a repeated request id", "id", id)
	if _, err := w.responses.lstat(ResponseName(id)); err != nil {
		version := Version12 // a 1.3 client gets its error_code (duplicate_id)
		if fi, err := w.requests.lstat(name); err == nil {
			if data, err := w.readRequest(name, fi); err == nil {
				version = versionHint(data)
			}
		}
		body := w.errorResponse(id, version, &RequestError{Code: CodeDuplicateID,
			Msg: "request id was already used in this bridge folder; every request needs a new unique id (a UUID)"})
		if err := w.responses.writeAtomic(ResponseName(id), tempName(id), body.data); err != nil {
			return fmt.Errorf("write response for %s: %w", id, err)
		}
		w.count(func() { st.Answered++; st.Errors++ })
	}
	w.removeRequest(id, name)
	return nil
}

// removeRequest removes a processed request. A failure is logged once per
// name and never stops the queue: the id record keeps the request from
// being answered again.
func (w *Worker) removeRequest(id, name string) {
	err := w.requests.remove(name)
	if err != nil && !isNotExist(err) {
		if fi, lerr := w.requests.lstat(name); lerr == nil && fi.isDir() {
			err = w.requests.removeDir(name) // an (empty) directory posing as a request
		}
	}
	if err == nil || isNotExist(err) {
		return
	}
	w.recMu.Lock()
	logged := w.stuck[name]
	if w.stuck == nil {
		w.stuck = map[string]bool{}
	}
	w.stuck[name] = true
	w.recMu.Unlock()
	if !logged {
		w.log.Warn("could not remove a processed request; it will not be answered again", "id", id, "err", err)
	}
}

// reply is a response body; code is the error code of an error response
// and empty for a success.
type reply struct {
	data []byte
	code string
}

// answer reads, checks and serves one request file; it always produces a
// response. The returned Request is as far as parsing got.
func (w *Worker) answer(ctx context.Context, id, name string, lfi fileInfo) (Request, reply) {
	data, err := w.readRequest(name, lfi)
	if err != nil {
		return Request{}, w.errorResponse(id, Version12, err)
	}
	req, err := ParseRequest(data, id)
	if err != nil {
		return req, w.errorResponse(id, versionHint(data), err)
	}
	return req, w.serve(ctx, req)
}

// versionHint lets an invalid 1.3 request still get a 1.3-shaped error
// when its protocol_version can be read.
func versionHint(data []byte) string {
	var v struct {
		V string `json:"protocol_version"`
	}
	if json.Unmarshal(data, &v) == nil {
		if major, minor, ok := parseVersion(v.V); ok && major == ProtocolMajor && minor >= 3 {
			return Version13
		}
	}
	return Version12
}

// readRequest applies the file rules: a regular file (not a symlink, FIFO,
// device or directory) with one link, owned by the current user, at most
// 64 KiB, and still the same file that was listed.
func (w *Worker) readRequest(name string, lfi fileInfo) ([]byte, error) {
	if !lfi.isRegular() {
		return nil, invalid("request file must be a regular file, but it is %s", typeName(lfi))
	}
	if lfi.size > MaxRequestSize {
		return nil, invalid("request file is %d bytes; the limit is %d (64 KiB)", lfi.size, MaxRequestSize)
	}
	f, err := w.requests.open(name, oRDONLY|oNONBLOCK, 0)
	if err != nil {
		return nil, invalid("request file cannot be opened safely (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := statFile(f)
	if err != nil {
		return nil, invalid("request file cannot be read")
	}
	switch {
	case !fi.same(lfi):
		return nil, invalid("request file was replaced while it was being read")
	case !fi.isRegular():
		return nil, invalid("request file must be a regular file, but it is %s", typeName(fi))
	case fi.uid != euid:
		return nil, invalid("request file must be owned by the current user (uid %d), not uid %d", euid, fi.uid)
	case fi.nlink != 1:
		return nil, invalid("request file must have exactly one link (it has %d)", fi.nlink)
	case fi.size > MaxRequestSize:
		return nil, invalid("request file is %d bytes; the limit is %d (64 KiB)", fi.size, MaxRequestSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRequestSize+1))
	if err != nil {
		return nil, invalid("request file cannot be read")
	}
	if len(data) > MaxRequestSize {
		return nil, invalid("request file is larger than %d bytes (64 KiB)", MaxRequestSize)
	}
	return data, nil
}

// serve dispatches a parsed request: role, action, parameters, backend.
func (w *Worker) serve(ctx context.Context, req Request) reply {
	if w.roleErr != nil {
		return w.errorResponse(req.ID, req.Version, &RequestError{Code: CodeRoleInvalid, Msg: w.roleErr.Error()})
	}
	spec, ext, known := w.lookup(req.Action, req.Version)
	if !known {
		return w.errorResponse(req.ID, req.Version, &RequestError{Code: CodeUnknownAction,
			Msg: fmt.Sprintf("unknown action %s", excerpt(req.Action))})
	}
	if !spec.allows(w.role) {
		return w.errorResponse(req.ID, req.Version, &RequestError{Code: CodeNotPermitted, Msg: ErrTextNotPermitted})
	}
	result, extra, err := w.call(ctx, req, ext)
	if err != nil {
		return w.errorResponse(req.ID, req.Version, err)
	}
	if req.Version != Version13 {
		extra = nil
	}
	body, err := encodeOK(req.ID, req.Action, result, extra)
	if err != nil {
		w.log.Error("encode response", "id", req.ID, "action", req.Action, "err", err)
		return w.errorResponse(req.ID, req.Version, &RequestError{Code: CodeInternal, Msg: "the helper could not encode its answer"})
	}
	return reply{data: body}
}

func (w *Worker) lookup(action, version string) (actionSpec, *Extension, bool) {
	if spec, ok := roleTable[action]; ok {
		return spec, nil, true
	}
	if version == Version13 {
		for i := range w.opts.Extensions {
			if e := &w.opts.Extensions[i]; e.Name == action {
				return e.spec(), e, true
			}
		}
	}
	return actionSpec{}, nil, false
}

// call validates the parameters, opens the backend and runs the action.
func (w *Worker) call(ctx context.Context, req Request, ext *Extension) (any, map[string]any, error) {
	p := req.Params
	if ext != nil {
		b, err := w.openBackend(ctx)
		if err != nil {
			return nil, nil, err
		}
		raw, _ := json.Marshal(p)
		res, err := ext.Handle(ctx, b, raw)
		return res, nil, err
	}
	switch req.Action {
	case ActionStatus:
		res, extra := w.status(ctx, req.Version)
		return res, extra, nil
	case ActionReview:
		in, err := parseReview(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.Review(ctx, in)
			r.Days = in.Days
			r.NeedsReply, r.LowPriority, r.SkipSummary = nonNil(r.NeedsReply), nonNil(r.LowPriority), nonNil(r.SkipSummary)
			for i := range r.NeedsReply {
				r.NeedsReply[i].Context = nonNil(r.NeedsReply[i].Context)
			}
			for i := range r.LowPriority {
				r.LowPriority[i].Context = nonNil(r.LowPriority[i].Context)
			}
			return r, nil, err
		})
	case ActionSearch:
		in, err := parseSearch(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.Search(ctx, in)
			r.Term, r.Days = in.Term, in.Days
			r.Matches = nonNil(r.Matches)
			r.MatchCount = len(r.Matches)
			return r, nil, err
		})
	case ActionChatHistory:
		in, err := parseChatHistory(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.ChatHistory(ctx, in)
			r.ChatQuery = in.Chat
			r.Messages = nonNil(r.Messages)
			r.Count = len(r.Messages)
			return r, nil, err
		})
	case ActionResponseStats:
		in, err := parseResponseStats(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.ResponseStats(ctx, in)
			r.ChatQuery, r.Hours = in.Chat, in.Hours
			return r, nil, err
		})
	case ActionContactsLookup:
		in, err := parseContactsLookup(p, w.role)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.ContactsLookup(ctx, in)
			r.Query = in.Name
			r.Matches = nonNil(r.Matches)
			if len(r.Matches) > contacts.MaxMatches {
				r.Matches = r.Matches[:contacts.MaxMatches]
			}
			r.MatchCount = len(r.Matches)
			return r, nil, err
		})
	case ActionListChats:
		in, err := parseListChats(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.ListChats(ctx, in)
			r.WindowDays = in.Days
			r.Chats = nonNil(r.Chats)
			if len(r.Chats) > in.Limit {
				r.Chats, r.Truncated = r.Chats[:in.Limit], true
			}
			for i := range r.Chats {
				c := &r.Chats[i]
				c.ParticipantCount = max(c.ParticipantCount, len(c.Participants))
				if len(c.Participants) > maxListedParticipants {
					c.Participants = c.Participants[:maxListedParticipants]
				}
				c.Participants = nonNil(c.Participants)
			}
			r.ChatCount = len(r.Chats)
			return r, nil, err
		})
	case ActionSendPreview:
		in, err := parseSendPreview(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.SendPreview(ctx, in)
			return r, r.Extra, err
		})
	case ActionSend:
		in, err := parseSend(p)
		if err != nil {
			return nil, nil, err
		}
		return run(ctx, w, func(b Backend) (any, map[string]any, error) {
			r, err := b.Send(ctx, in)
			return r, r.Extra, err
		})
	}
	return nil, nil, &RequestError{Code: CodeUnknownAction, Msg: fmt.Sprintf("unknown action %s", excerpt(req.Action))}
}

// maxListedParticipants is list_chats' cap on participants per chat.
const maxListedParticipants = 10

func run(ctx context.Context, w *Worker, fn func(Backend) (any, map[string]any, error)) (any, map[string]any, error) {
	b, err := w.openBackend(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, extra, err := fn(b)
	if err != nil {
		return nil, nil, err
	}
	return res, extra, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// openBackend opens the backend on first use.
func (w *Worker) openBackend(ctx context.Context) (Backend, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.backend != nil {
		return w.backend, nil
	}
	if w.opts.Open == nil {
		return nil, fmt.Errorf("the helper has no data backend: %w", ErrUnavailable)
	}
	b, err := w.opts.Open(ctx, w.role)
	if err != nil {
		w.log.Error("open backend", "err", err)
		return nil, fmt.Errorf("the helper cannot open its data (%w); on macOS, grant it Full Disk Access and check control/log.txt", err)
	}
	w.backend = b
	return b, nil
}

// errorResponse builds an error answer with the role's allowed actions.
// For a 1.3 request it adds error_code and, when err carries them
// (Detailed), detail fields such as a failed send's delivery report.
func (w *Worker) errorResponse(id, version string, err error) reply {
	code := errorCode(err)
	// The error may quote the request or a file: escaped and bounded
	// (docs/security.md, "Errors that quote input").
	e := errorBody{ID: id, Error: sanitize.Message(err.Error()), BridgeRole: string(w.role),
		AllowedActions: AllowedActions(w.role, version, w.opts.Extensions)}
	if version != Version13 {
		return reply{data: encodeError(e), code: code}
	}
	e.ErrorCode = code
	body := encodeError(e)
	var d Detailed
	if errors.As(err, &d) {
		if extra := d.BridgeDetail(); len(extra) > 0 {
			if b, err := appendFields(body, extra); err == nil {
				body = b
			} else {
				w.log.Warn("error detail dropped", "id", id, "err", err)
			}
		}
	}
	return reply{data: body, code: code}
}

// reap removes responses older than ResponseTTL, temp files (the
// worker's and clients') older than TempTTL, and send-preview nonces older
// than NonceMaxAge — on every helper run, as docs/bridge.md says, not only when
// the send gate next runs (a preview never followed by a send would
// otherwise leave its nonce file behind for good).
func (w *Worker) reap(now time.Time, st *Stats) {
	sweep := func(d *dir, match func(string) (time.Duration, bool)) {
		names, err := d.names()
		if err != nil {
			w.log.Warn("reap", "err", err)
			return
		}
		for _, n := range names {
			ttl, ok := match(n)
			if !ok {
				continue
			}
			fi, err := d.lstat(n)
			if err != nil || fi.isDir() || now.Sub(fi.mtime) < ttl {
				continue
			}
			if d.remove(n) == nil {
				st.Reaped++
			}
		}
	}
	sweep(w.responses, func(n string) (time.Duration, bool) {
		switch {
		case strings.HasPrefix(n, "response-") && strings.HasSuffix(n, ".json"):
			return w.opts.ResponseTTL, true
		case strings.HasPrefix(n, ".response-") && strings.HasSuffix(n, ".tmp"):
			return w.opts.TempTTL, true
		}
		return 0, false
	})
	sweep(w.requests, func(n string) (time.Duration, bool) {
		return w.opts.TempTTL, strings.HasPrefix(n, ".request-") && strings.HasSuffix(n, ".tmp")
	})
	sweep(w.nonces, func(string) (time.Duration, bool) { return w.opts.NonceMaxAge, true })
}

// status builds the status answer for a request of version v.
func (w *Worker) status(ctx context.Context, v string) (StatusResult, map[string]any) {
	var det StatusDetails
	if w.opts.Status != nil {
		det = w.opts.Status(ctx)
	}
	checks := map[string]bool{
		CheckRequestsDir:  w.requests.recheck() == nil,
		CheckResponsesDir: w.responses.recheck() == nil,
		CheckNoncesDir:    w.nonces.recheck() == nil,
		CheckLogFile:      w.logFile != nil,
		CheckDatabase:     false,
		CheckConfirmation: false,
	}
	for k, ok := range det.Checks {
		checks[k] = ok
	}
	res := StatusResult{
		HelperVersion:   w.opts.HelperVersion,
		ProtocolVersion: v,
		BridgeRole:      string(w.role),
		AllowedActions:  AllowedActions(w.role, v, w.opts.Extensions),
		CodeRoot:        w.opts.CodeRoot,
		BridgeRoot:      w.root.path,
		Policy:          det.Policy,
		Checks:          checks,
	}
	if v != Version13 {
		return res, nil
	}
	extra := map[string]any{}
	for k, val := range det.Extra {
		extra[k] = val // encodeOK drops keys that collide with the fields above
	}
	if w.opts.StatusExtra != nil {
		for k, val := range w.opts.StatusExtra(ctx) {
			extra[k] = val
		}
	}
	extra["go_version"] = runtime.Version()
	extra["supported_protocol_versions"] = []string{Version12, Version13}
	ext := []string{}
	for _, e := range w.opts.Extensions {
		if e.spec().allows(w.role) {
			ext = append(ext, e.Name)
		}
	}
	slices.Sort(ext)
	extra["extension_actions"] = ext
	return res, extra
}

// PrepareFolder creates the bridge folder (and any missing parent) and its
// runtime directories with mode 0700, checking them as the worker does:
// an existing unsafe directory is refused, never changed.
func PrepareFolder(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(abs), err)
	}
	r, err := openRuntimeDirs(abs)
	if err != nil {
		return err
	}
	r.close()
	return nil
}
