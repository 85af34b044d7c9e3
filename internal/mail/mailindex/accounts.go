package mailindex

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
)

// Accounts syncs every [[mail.accounts]] backend of a configuration
// into one index (docs/index.md, "When mail is synced"): `tidings index`
// runs it once, serve on start and then every few minutes. A failing
// account is reported in its Result and never stops the others.
type Accounts struct {
	ix    *index.Index
	st    *mail.Store
	own   map[string][]string
	opts  Options
	runMu sync.Mutex // one sync at a time

	mu   sync.Mutex
	last []Result
}

// Result is one account's outcome of a run.
type Result struct {
	Account string
	Stats   Stats
	Err     error
}

// NewAccounts builds the syncer of cfg's accounts. Nothing is contacted
// and no secret is read until Run. o.Own is ignored: each account's own
// addresses are its from addresses and its username (when an address).
func NewAccounts(cfg *config.Config, ix *index.Index, now func() time.Time, o Options) (*Accounts, error) {
	st, err := mail.StoreFromConfig(cfg, now)
	if err != nil {
		return nil, err
	}
	own := map[string][]string{}
	for _, a := range cfg.Mail.Accounts {
		var l []string
		for _, f := range a.From {
			l = append(l, strings.ToLower(f))
		}
		if u := strings.ToLower(a.Username); strings.Contains(u, "@") && !slices.Contains(l, u) {
			l = append(l, u)
		}
		own[a.Name] = l
	}
	return &Accounts{ix: ix, st: st, own: own, opts: o}, nil
}

// Len is the number of accounts with something to read.
func (a *Accounts) Len() int { return len(a.st.Backends) }

// Run syncs every account in config order and returns each outcome.
func (a *Accounts) Run(ctx context.Context) []Result {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	out := make([]Result, 0, len(a.st.Backends))
	for _, b := range a.st.Backends {
		o := a.opts
		o.Own = a.own[b.Account()]
		st, err := Sync(ctx, a.ix, b, o)
		out = append(out, Result{Account: b.Account(), Stats: st, Err: err})
	}
	a.mu.Lock()
	a.last = out
	a.mu.Unlock()
	return out
}

// Failed returns the accounts whose last sync failed, as "Account: error"
// lines (get_status shows them).
func (a *Accounts) Failed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.last {
		if r.Err != nil {
			out = append(out, r.Account+": "+r.Err.Error())
		}
	}
	return out
}

// Close closes the backends (their IMAP connections).
func (a *Accounts) Close() {
	for _, b := range a.st.Backends {
		b.Close()
	}
}
