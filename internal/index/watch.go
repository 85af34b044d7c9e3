package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configure Watch.
type WatchOptions struct {
	// Sources are synced when their files change.
	Sources []Source
	// Paths are the files whose changes trigger a sync: for chat.db, the
	// database and its -wal (Messages commits to the WAL). Their folders
	// are watched, so a WAL created later is seen.
	Paths []string
	// Poll is how often the files are also checked by size and
	// modification time, catching changes fsnotify cannot see (network
	// file systems, a watch limit reached). Default 2 s; negative disables.
	Poll time.Duration
	// FullDelay is how long after the last change a full sync (edits,
	// retractions, deletions) runs; every change triggers a fast sync of
	// new rows at once. Default 2 s.
	FullDelay time.Duration
	// NoNotify disables fsnotify (polling only), for file systems that do
	// not report changes.
	NoNotify bool
	// OnSync, when set, is called after every sync.
	OnSync func(rep SyncReport, full bool, err error)
}

// Watch keeps the index fresh until ctx ends: a full sync first, then a
// fast sync (new rows only) as soon as a watched file changes — a new
// message is searchable within milliseconds — and a full sync once
// changes settle. It also runs the background embedder. Sync errors are
// reported through OnSync and logged; Watch itself returns only when ctx
// ends (nil) or the first sync fails.
func (ix *Index) Watch(ctx context.Context, opts WatchOptions) error {
	if opts.Poll == 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.FullDelay <= 0 {
		opts.FullDelay = 2 * time.Second
	}
	changes := make(chan struct{}, 1)
	notify := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	names := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range opts.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		names[abs] = true
		dirs[filepath.Dir(abs)] = true
	}
	if opts.NoNotify {
		// polling only
	} else if w, err := fsnotify.NewWatcher(); err != nil {
		ix.log.Warn("file watching unavailable; polling only", "err", err)
	} else {
		defer w.Close()
		for d := range dirs {
			if err := w.Add(d); err != nil {
				ix.log.Warn("cannot watch folder; polling it", "dir", d, "err", err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.Events:
					if !ok {
						return
					}
					if names[filepath.Clean(ev.Name)] && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 {
						notify()
					}
				case err, ok := <-w.Errors:
					if !ok {
						return
					}
					ix.log.Warn("file watcher", "err", err)
					notify() // an overflow may have hidden a change
				}
			}
		}()
	}
	if opts.Poll > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := statAll(opts.Paths)
			// A read-policy change (or the policy loading again after a
			// breakage) needs a sync even when no file changed: it
			// purges what the policy now blocks and re-reads the sources
			// for threads it now allows (purge.go).
			lastPolicy := ix.policyFingerprint()
			t := time.NewTicker(opts.Poll)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if now := statAll(opts.Paths); now != last {
						last = now
						notify()
					}
					if fp := ix.policyFingerprint(); fp != lastPolicy {
						lastPolicy = fp
						if fp != "" {
							notify()
						}
					}
				}
			}
		}()
	}

	// The first full sync runs after the watches are in place, so a change
	// made while it runs is not lost.
	rep, err := ix.Sync(ctx, SyncOptions{}, opts.Sources...)
	if opts.OnSync != nil {
		opts.OnSync(rep, true, err)
	}
	if err != nil {
		return err
	}
	ix.startEmbedder(ctx)

	full := time.NewTimer(time.Hour)
	full.Stop()
	// A file event can arrive before the commit that caused it is visible
	// (the writer appends WAL frames, then syncs, then publishes the commit
	// in shared memory, which raises no event), so each change is followed
	// by a few quick re-reads; a fast sync that finds nothing costs one
	// indexed query.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	var settleStep int
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ix.closed:
			return nil
		case <-changes:
			rep, err := ix.Sync(ctx, SyncOptions{NewOnly: true}, opts.Sources...)
			ix.reportSync(opts, rep, false, err)
			full.Reset(opts.FullDelay)
			settleStep = 0
			settle.Reset(settleDelays[0])
		case <-settle.C:
			rep, err := ix.Sync(ctx, SyncOptions{NewOnly: true}, opts.Sources...)
			ix.reportSync(opts, rep, false, err)
			if settleStep++; settleStep < len(settleDelays) {
				settle.Reset(settleDelays[settleStep])
			}
		case <-full.C:
			rep, err := ix.Sync(ctx, SyncOptions{}, opts.Sources...)
			ix.reportSync(opts, rep, true, err)
		}
	}
}

// settleDelays are the re-reads after a change (see Watch).
var settleDelays = []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond, 200 * time.Millisecond}

func (ix *Index) reportSync(opts WatchOptions, rep SyncReport, full bool, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		ix.log.Error("sync", "full", full, "err", err)
	}
	if opts.OnSync != nil {
		opts.OnSync(rep, full, err)
	}
}

// statAll summarises the size and modification time of paths.
func statAll(paths []string) string {
	var b []byte
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b = append(b, '-')
			continue
		}
		b = append(b, fi.ModTime().Format(time.RFC3339Nano)...)
		b = append(b, byte(fi.Size()), byte(fi.Size()>>8), byte(fi.Size()>>16), byte(fi.Size()>>24))
	}
	return string(b)
}
