package mail

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/scope"
)

// AccountInfo is what the tools show and check of one [[mail.accounts]].
type AccountInfo struct {
	Name string
	Kind string
	// From lists the addresses the account may send as (lower case).
	From []string
	// CanSend is true when the account has an SMTP server.
	CanSend bool
}

// Store is every configured mail account and the read policy over them.
type Store struct {
	Backends []Backend
	Accounts []AccountInfo
	// Self lists the user's own addresses (every account's from and
	// e-mail user names), lower case: they are never a reason to hide a
	// mail.
	Self []string
	// Allow reports whether mail whose correspondents (other than Self)
	// are addrs may be shown; nil allows everything (tests only). An error
	// hides the mail (the policy fails closed).
	Allow func(ctx context.Context, addrs []string) (bool, error)
	Now   func() time.Time
}

// ErrNotFound is what every tool says about a message that does not
// exist and about one the read policy hides, in the same words, so an
// answer never reveals a blocked correspondent's mail.
var ErrNotFound = errors.New("no such message in that mailbox (it may have been moved or deleted); list the mailbox again with mail_get_emails")

// Backend returns the account's backend.
func (s *Store) Backend(account string) (Backend, error) {
	for _, b := range s.Backends {
		if scope.Fold(b.Account()) == scope.Fold(account) {
			return b, nil
		}
	}
	return nil, fmt.Errorf("there is no mail account %q (mail_list_accounts lists them)", account)
}

// Info returns the account's description.
func (s *Store) Info(account string) (AccountInfo, bool) {
	for _, a := range s.Accounts {
		if scope.Fold(a.Name) == scope.Fold(account) {
			return a, true
		}
	}
	return AccountInfo{}, false
}

// Listing is every mailbox of the accounts that answered.
type Listing struct {
	Mailboxes []Mailbox
	// Problems names accounts that could not be listed.
	Problems []string
}

// Mailboxes lists the mailboxes of the given accounts (all when nil).
func (s *Store) Mailboxes(ctx context.Context, accounts []string) Listing {
	var l Listing
	for _, b := range s.Backends {
		if accounts != nil && !slices.ContainsFunc(accounts, func(a string) bool { return scope.Fold(a) == scope.Fold(b.Account()) }) {
			continue
		}
		mbs, err := b.Mailboxes(ctx)
		if err != nil {
			l.Problems = append(l.Problems, err.Error())
			continue
		}
		l.Mailboxes = append(l.Mailboxes, mbs...)
	}
	return l
}

// Rows are the mailboxes as scope rows (Account, Path).
func Rows(mbs []Mailbox) []scope.Row {
	out := make([]scope.Row, len(mbs))
	for i, m := range mbs {
		out[i] = scope.Row{Account: m.Account, Name: m.Path, ID: m.Account + "\x00" + m.Path}
	}
	return out
}

// ResolveMailbox finds the mailbox a tool's account + mailbox arguments
// mean among mbs (docs/tools.md "Mail"): account may be empty when one
// account holds a match; mailbox is a path ("Work/Projects", "INBOX"),
// matched ignoring case, else a leaf name carried by exactly one mailbox
// ("Projects"). Two carriers are refused with both named, because filing
// into one of two is a coin toss the answer could not show. The result is
// an index into mbs; the caller checks it against the scope.
func ResolveMailbox(mbs []Mailbox, account, mailbox string) (int, error) {
	mailbox = strings.Trim(strings.TrimSpace(mailbox), "/")
	if mailbox == "" {
		mailbox = "INBOX"
	}
	account = strings.TrimSpace(account)
	// "Account/Path" given whole in mailbox.
	if account == "" {
		if a, p, ok := strings.Cut(mailbox, "/"); ok {
			for _, m := range mbs {
				if scope.Fold(m.Account) == scope.Fold(a) {
					account, mailbox = a, p
					break
				}
			}
		}
	}
	var cands []int
	for i, m := range mbs {
		if account == "" || scope.Fold(m.Account) == scope.Fold(account) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return -1, fmt.Errorf("there is no mail account %q (mail_list_accounts lists them)", account)
	}
	pick := func(match func(Mailbox) bool) []int {
		var hits []int
		for _, i := range cands {
			if match(mbs[i]) {
				hits = append(hits, i)
			}
		}
		return hits
	}
	hits := pick(func(m Mailbox) bool { return scope.Fold(m.Path) == scope.Fold(mailbox) })
	if len(hits) == 0 && !strings.Contains(mailbox, "/") {
		hits = pick(func(m Mailbox) bool { return scope.Fold(leaf(m.Path)) == scope.Fold(mailbox) })
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) == 0:
		return -1, fmt.Errorf("there is no mailbox %q; mail_list_mailboxes lists them", mailbox)
	}
	names := make([]string, 0, len(hits))
	for _, i := range hits[:min(len(hits), 5)] {
		names = append(names, fmt.Sprintf("%q", mbs[i].Account+"/"+mbs[i].Path))
	}
	return -1, fmt.Errorf("mailbox %q is ambiguous: it could be %s; give the account and the full path", mailbox, strings.Join(names, " or "))
}

func leaf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// Correspondents lists a mail's addresses other than the user's own, from
// the fields the read policy reads (From, Sender, Reply-To, To, Cc): Bcc
// is the user's own choice on mail they sent and never set on mail they
// received.
func (s *Store) Correspondents(sum Summary) []string {
	var out []string
	for _, list := range [][]Address{sum.From, sum.Sender, sum.ReplyTo, sum.To, sum.Cc} {
		for _, a := range list {
			addr := strings.ToLower(strings.TrimSpace(a.Addr))
			if addr == "" || slices.Contains(s.Self, addr) || slices.Contains(out, addr) {
				continue
			}
			out = append(out, addr)
		}
	}
	return out
}

// Visible applies the read policy to one mail: hidden when any
// correspondent is blocked (in allowlist mode: unless all are allowed),
// and hidden while the policy cannot be loaded.
func (s *Store) Visible(ctx context.Context, sum Summary) bool {
	if s.Allow == nil {
		return true
	}
	ok, err := s.Allow(ctx, s.Correspondents(sum))
	return err == nil && ok
}

// Owns reports whether addr is one of account's from addresses.
func (s *Store) Owns(account, addr string) bool {
	a, ok := s.Info(account)
	return ok && slices.Contains(a.From, strings.ToLower(strings.TrimSpace(addr)))
}
