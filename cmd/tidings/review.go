package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service"
)

func init() {
	register(command{
		name:    "review",
		summary: "catch up: who is waiting on a reply, what can wait, what to skip (tidings review [--days 2] [--json])",
		run:     runReview,
	})
}

// queryFlags are the settings the read-only query commands accept.
var queryFlags = []string{"home", "region", "contacts", "imessage", "log-level", "embedder", "embedder-url", "embedder-model", "embedder-api-key-env"}

const reviewUsage = `Usage: tidings review [--days N] [--context N] [--json]

Sorts the conversations of the last N days (default 2, at most 90) the
way review_messages does for an assistant: needs reply (someone is
waiting on you), low priority (nothing asked), and skipped (automated
senders, threads you answered last, "ok"/"thanks" endings). Reads the
index built by 'tidings index'; your read policy applies.

Flags:
`

// openQuery loads the configuration and opens the index read-only and the
// query layer over it; done closes both.
func openQuery(ctx context.Context, m *Main, loader *config.Loader) (cfg *config.Config, svc *service.Service, done func(), err error) {
	cfg, err = loader.Load(m.Getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	logger := newLogger(m.Stderr, cfg.LogLevel)
	ix, err := openIndex(ctx, cfg, m.Getenv, logger, true)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w (run 'tidings index' first)", err)
	}
	svc, closeSvc, err := newService(ctx, cfg, ix, logger, false)
	if err != nil {
		ix.Close()
		return nil, nil, nil, err
	}
	// The index is read-only here, so the query layer cannot purge. When
	// the policy changed since the index was last checked against it (the
	// files were edited by hand, or a block ran while the index could not
	// be opened), the purge happens now, through a writable open, before
	// anything is answered (docs/security.md, "Reload and fingerprint").
	// If that fails the answer still hides the thread and answers its
	// words like absent ones (internal/index/hidden.go).
	if ok, err := svc.PolicyApplied(ctx); err == nil && !ok {
		if _, err := applyHomePolicy(ctx, cfg, m.Getenv, logger); err != nil {
			logger.Warn("read policy changed; the index could not be purged now", "err", err)
		}
	}
	return cfg, svc, func() { closeSvc(); ix.Close() }, nil
}

func runReview(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "review", reviewUsage)
	loader := config.Bind(fs, queryFlags...)
	days := fs.String("days", "2", "days to review, more than 0 and at most 90")
	nctx := fs.Int("context", 5, "recent messages shown per thread (1-10)")
	jsonOut := fs.Bool("json", false, "print the review as JSON (the review_messages fields, bodies not wrapped)")
	if help, err := parseNoArgs(fs, args); help || err != nil {
		return err
	}
	d, err := coerce.Days(*days, coerce.DaysSpec{Name: "--days", Default: service.DefaultReviewDays, Max: service.MaxReviewDays})
	if err != nil {
		return usageError{err.Error()}
	}
	if *nctx < 1 || *nctx > 10 {
		return usageError{fmt.Sprintf("--context %d: want 1 to 10", *nctx)}
	}
	cfg, svc, done, err := openQuery(ctx, m, loader)
	if err != nil {
		return err
	}
	defer done()
	rv, err := svc.Review(ctx, service.ReviewParams{Days: d, Context: *nctx})
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(m.Stdout, rv)
	}
	printReview(m.Stdout, rv, cfg.Now())
	return nil
}

// printReview writes a review for a person: the threads that need a reply
// with their last messages, the ones that can wait, and one line for the
// skipped ones.
func printReview(w io.Writer, rv service.Review, now time.Time) {
	c := rv.Counts
	fmt.Fprintf(w, "Last %s: %d messages — %d need a reply, %d can wait, %d skipped.\n", daysText(rv.Days), c.TotalMessages, c.NeedsReply, c.LowPriority, c.Skip)
	section := func(title string, ts []service.ReviewThread) {
		if len(ts) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, t := range ts {
			fmt.Fprintf(w, "\n  %s  (%s, %s)\n", t.Label, ago(now, t.LastTime), strings.Join(t.Reasons, "; "))
			for _, m := range t.Context {
				who := "them"
				if m.Me {
					who = "me  "
				}
				fmt.Fprintf(w, "    %s %s  %s\n", m.Time.Format("Jan 2 15:04"), who, oneLine(m.Text, 100))
			}
		}
	}
	section("NEEDS A REPLY", rv.NeedsReply)
	section("CAN WAIT", rv.LowPriority)
	if len(rv.SkipSummary) > 0 {
		var names []string
		for _, s := range rv.SkipSummary {
			names = append(names, s.Label)
		}
		fmt.Fprintf(w, "\nSKIPPED: %s\n", strings.Join(names, ", "))
	}
	if rv.Note != "" {
		fmt.Fprintf(w, "\nnote: %s\n", rv.Note)
	}
}

func daysText(d float64) string {
	if d == 1 {
		return "day"
	}
	return strconv.FormatFloat(d, 'f', -1, 64) + " days"
}

// ago says how long ago t was, roughly.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
}

// oneLine shows a body on one line, cut to n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// errNoIndex is applyHomePolicy's answer when there is no index yet.
var errNoIndex = errors.New("no index yet")

// applyHomePolicy opens the home's index for writing and purges what the
// read policy (person-aware, as the server applies it) hides, with the
// dossiers it hides; it returns the number of threads purged.
func applyHomePolicy(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger) (int, error) {
	if _, err := os.Stat(indexPath(cfg)); errors.Is(err, fs.ErrNotExist) {
		return 0, errNoIndex
	}
	ix, err := openIndex(ctx, cfg, getenv, logger, false)
	if err != nil {
		return 0, err
	}
	defer ix.Close()
	svc, done, err := newService(ctx, cfg, ix, logger, false)
	if err != nil {
		return 0, err
	}
	defer done()
	return svc.ApplyPolicy(ctx)
}
