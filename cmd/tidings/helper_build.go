package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/service"
)

// The helper's index is synced in the background. A data request waits
// for the sync at most readyWait (under the client's 15 s timeout); if it
// is not done by then — the first sync of a large chat.db takes longer —
// the request is answered at once with an honest "the index is being
// built (how far), retry shortly" error (error_code "unavailable"), and the
// sync goes on. `status` and the send gate never wait for it. With --once
// the helper stays up until the sync is done, answering requests as they
// come, so the next request finds a complete index.

// defaultReadyWait is how long a data request waits for a running sync.
const defaultReadyWait = 10 * time.Second

// indexBuild is the helper's background sync of its index.
type indexBuild struct {
	run func(ctx context.Context, progress *buildProgress) error
	log *slog.Logger

	mu      sync.Mutex
	ctx     context.Context // ends when the helper closes its data
	done    chan struct{}   // closed when the current attempt ends
	err     error           // of the last finished attempt
	ok      bool            // an attempt succeeded
	started time.Time
	prog    *buildProgress
	wg      sync.WaitGroup
}

// newIndexBuild starts run in the background.
func newIndexBuild(ctx context.Context, log *slog.Logger, run func(ctx context.Context, progress *buildProgress) error) *indexBuild {
	b := &indexBuild{run: run, log: log, ctx: ctx}
	b.mu.Lock()
	b.startLocked()
	b.mu.Unlock()
	return b
}

func (b *indexBuild) startLocked() {
	done := make(chan struct{})
	prog := &buildProgress{}
	b.done, b.prog, b.started = done, prog, time.Now()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		start := time.Now()
		err := b.run(b.ctx, prog)
		b.mu.Lock()
		b.err = err
		b.ok = b.ok || err == nil
		b.mu.Unlock()
		close(done)
		if err != nil && b.ctx.Err() == nil {
			b.log.Error("index sync failed", "err", err)
		} else if err == nil {
			b.log.Info("index synced", "took", time.Since(start).Round(time.Millisecond))
		}
	}()
}

// wait returns nil once a sync has completed, waiting at most max for a
// running one. A failed attempt is reported and a new one started, so a
// passing problem (a locked database) heals on the next request.
func (b *indexBuild) wait(ctx context.Context, max time.Duration) error {
	b.mu.Lock()
	done := b.done
	select {
	case <-done:
		if b.ok {
			b.mu.Unlock()
			return nil
		}
		err := b.err
		if b.ctx.Err() == nil {
			b.startLocked() // try again for the next request
		}
		b.mu.Unlock()
		return fmt.Errorf("the helper could not sync its index (%v); it is trying again — retry shortly, and see control/log.txt: %w", err, bridge.ErrUnavailable)
	default:
	}
	b.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-done:
		return b.wait(ctx, 0)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	b.mu.Lock()
	elapsed, prog := time.Since(b.started), b.prog
	b.mu.Unlock()
	return fmt.Errorf("the helper is building its index for the first time (%s, %s so far); it answers as soon as that is done — retry in a few seconds: %w",
		prog.String(), elapsed.Round(time.Second), bridge.ErrUnavailable)
}

// finished reports whether no sync is running.
func (b *indexBuild) finished() (<-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		return b.done, true
	default:
		return b.done, false
	}
}

// progress reports whether a sync is running and how far it got.
func (b *indexBuild) progress() (running bool, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		return false, ""
	default:
		return true, b.prog.String() + ", " + time.Since(b.started).Round(time.Second).String() + " so far"
	}
}

// close waits for the running attempt (its context must already be
// cancelled).
func (b *indexBuild) close() { b.wg.Wait() }

// buildProgress reads the index's one-line progress display ("\r
// embedding: 40,000 of 100,000 (12,000/s)") and keeps the latest phase and
// counts.
type buildProgress struct {
	mu       sync.Mutex
	phase    string
	n, total int64
	line     strings.Builder
}

var progressRE = regexp.MustCompile(`^([a-z][a-z ]*): ([0-9,]+)(?: of ([0-9,]+))?`)

// Write implements io.Writer for index.SyncOptions.Progress.
func (p *buildProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range string(b) {
		switch c {
		case '\r', '\n':
			p.parseLocked()
			p.line.Reset()
		default:
			if p.line.Len() < 200 {
				p.line.WriteRune(c)
			}
		}
	}
	p.parseLocked()
	return len(b), nil
}

func (p *buildProgress) parseLocked() {
	s := strings.TrimSuffix(p.line.String(), "\x1b[K")
	m := progressRE.FindStringSubmatch(s)
	if m == nil {
		return
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64); return n }
	p.phase, p.n, p.total = m[1], num(m[2]), num(m[3])
}

// String says how far the build is, for the "retry shortly" answer.
func (p *buildProgress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.phase == "":
		return "starting"
	case p.total > 0:
		return fmt.Sprintf("%s: %d%%, %s of %s", p.phase, p.n*100/p.total, groupInt(p.n), groupInt(p.total))
	case p.phase == "indexing":
		return fmt.Sprintf("indexing: %s messages read", groupInt(p.n))
	}
	return fmt.Sprintf("%s: %s", p.phase, groupInt(p.n))
}

// groupInt writes n with thousands separators.
func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// hostIndexData is the host backend's data part while the helper owns an
// index that syncs in the background: every data action first waits for
// the sync (bounded), then answers from the query layer.
type hostIndexData struct {
	*bridge.ServiceData
	build *indexBuild
	wait  time.Duration
}

func (d *hostIndexData) Review(ctx context.Context, p bridge.ReviewParams) (bridge.ReviewResult, error) {
	if err := d.build.wait(ctx, d.wait); err != nil {
		return bridge.ReviewResult{}, err
	}
	return d.ServiceData.Review(ctx, p)
}

func (d *hostIndexData) Search(ctx context.Context, p bridge.SearchParams) (bridge.SearchResult, error) {
	if err := d.build.wait(ctx, d.wait); err != nil {
		return bridge.SearchResult{}, err
	}
	return d.ServiceData.Search(ctx, p)
}

func (d *hostIndexData) ChatHistory(ctx context.Context, p bridge.ChatHistoryParams) (bridge.ChatHistoryResult, error) {
	if err := d.build.wait(ctx, d.wait); err != nil {
		return bridge.ChatHistoryResult{}, err
	}
	return d.ServiceData.ChatHistory(ctx, p)
}

func (d *hostIndexData) ResponseStats(ctx context.Context, p bridge.ResponseStatsParams) (bridge.ResponseStatsResult, error) {
	if err := d.build.wait(ctx, d.wait); err != nil {
		return bridge.ResponseStatsResult{}, err
	}
	return d.ServiceData.ResponseStats(ctx, p)
}

func (d *hostIndexData) ContactsLookup(ctx context.Context, p bridge.ContactsLookupParams) (bridge.ContactsLookupResult, error) {
	if err := d.build.wait(ctx, d.wait); err != nil {
		return bridge.ContactsLookupResult{}, err
	}
	return d.ServiceData.ContactsLookup(ctx, p)
}

// hostService is the query layer behind the 1.3 message actions, once the
// index has synced (see hostIndexData).
func hostService(ctx context.Context, b bridge.Backend) (*service.Service, error) {
	if hb, ok := b.(*bridge.HostBackend); ok {
		if d, ok := hb.Data.(*hostIndexData); ok {
			if err := d.build.wait(ctx, d.wait); err != nil {
				return nil, err
			}
			return d.S, nil
		}
	}
	return bridge.ServiceOf(ctx, b)
}

// finishBuild keeps a --once helper answering until its index build is
// done (a pass every 250 ms), so that it does not exit in the middle of a
// first sync; then it answers what is left.
func (h *helperData) finishBuild(ctx context.Context, w *bridge.Worker) error {
	b := h.currentBuild()
	if b == nil {
		return nil
	}
	done, finished := b.finished()
	if finished {
		return nil
	}
	h.logger.Info("the index is still being built; answering requests until it is done")
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			_, err := w.Drain(ctx)
			return err
		case <-t.C:
			if _, err := w.Drain(ctx); err != nil {
				if errors.Is(err, context.Canceled) {
					return nil
				}
				if errors.Is(err, bridge.ErrUnsafe) {
					continue // refused and logged by the worker; the sync goes on
				}
				return err
			}
		}
	}
}

func (h *helperData) currentBuild() *indexBuild {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	return h.build
}

// syncIndex is the build's work: a full sync with embeddings, then (with
// --watch) the index's own watcher.
func syncIndex(ix *index.Index, srcs []index.Source) func(ctx context.Context, p *buildProgress) error {
	return func(ctx context.Context, p *buildProgress) error {
		if _, err := ix.Sync(ctx, index.SyncOptions{Embed: true, Progress: p}, srcs...); err != nil {
			return fmt.Errorf("sync the index: %w", err)
		}
		return nil
	}
}
