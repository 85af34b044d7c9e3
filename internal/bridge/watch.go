//go:build unix

package bridge

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch is the --watch mode: it drains the queue, then drains again
// whenever a request is published in control/requests (inotify on Linux,
// kqueue on macOS, through fsnotify) and, as a safety net for lost events
// or a watcher that cannot start, every Rescan period. It returns when ctx
// is cancelled (finishing the request in hand). A pass that finds a
// runtime directory unsafe is refused (nothing in the folder is read or
// written; Drain logs it, rate-limited) and Watch keeps going: the next
// pass checks again and serves once the folder is safe (docs/bridge.md,
// "The worker").
func (w *Worker) Watch(ctx context.Context) error {
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Warn("file watcher unavailable; rescanning periodically only", "err", err)
		watcher = nil
	}
	// watched is the requests folder the watch is on, by identity: a
	// folder replaced under the same path needs a new watch.
	var watched *dir
	addWatch := func() {
		if watcher == nil || watched == w.requests {
			return
		}
		if watched != nil {
			_ = watcher.Remove(watched.path)
		}
		watched = w.requests
		if err := watcher.Add(w.requests.path); err != nil {
			w.log.Warn("cannot watch the requests folder; rescanning periodically only", "err", err)
		}
	}
	if watcher != nil {
		defer watcher.Close()
	}
	addWatch()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if watcher != nil {
		events, errs = watcher.Events, watcher.Errors
	}
	ticker := time.NewTicker(w.opts.Rescan)
	defer ticker.Stop()

	drain := func() error {
		_, err := w.Drain(ctx)
		if w.passed != nil {
			w.passed(err)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return ctx.Err()
		}
		if errors.Is(err, ErrUnsafe) {
			return nil // refused and logged by Drain; checked again next pass
		}
		if err != nil {
			w.log.Error("bridge pass failed; retrying", "err", err)
		}
		addWatch() // the requests folder may have been reopened
		return nil
	}
	if err := drain(); err != nil {
		if ctx.Err() != nil {
			return nil // cancelled during the first pass: a normal end
		}
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !relevant(ev) {
				continue
			}
			// Coalesce a burst of events into one pass.
			for more := true; more; {
				select {
				case _, ok := <-events:
					more = ok
				default:
					more = false
				}
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.log.Warn("file watcher error; rescanning", "err", err)
		case <-ticker.C:
		}
		if err := drain(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// relevant reports whether an event may mean a new request.
func relevant(ev fsnotify.Event) bool {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Write) {
		return false
	}
	_, ok := idFromRequestName(filepath.Base(ev.Name))
	return ok
}
