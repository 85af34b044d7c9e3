package mail

import (
	"context"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// PolicySource yields the current read policy (*policy.Store).
type PolicySource interface {
	Current() (*policy.Policy, error)
}

// BookSource yields the contact book people are matched through; nil or a
// nil book = match addresses alone.
type BookSource func(ctx context.Context) (*contacts.Book, error)

// PolicyAllow is Store.Allow over the read policy (docs/security.md "Mail"):
// each correspondent is a person — their address and, when a card source
// holds a card with it, every handle of that card — and the mail is hidden
// when any handle of any correspondent is blocked; in allowlist mode every
// correspondent must also have at least one allowed handle (allowing your
// partner's phone number allows their e-mail; allowing them must not show
// a thread where strangers write). A policy or book that cannot be loaded
// hides the mail.
func PolicyAllow(src PolicySource, book BookSource) func(ctx context.Context, addrs []string) (bool, error) {
	return func(ctx context.Context, addrs []string) (bool, error) {
		p, err := src.Current()
		if err != nil {
			return false, err
		}
		var b *contacts.Book
		if book != nil {
			if b, err = book(ctx); err != nil {
				return false, err
			}
		}
		for _, a := range addrs {
			handles := []string{a}
			if b != nil {
				if person, ok := b.Resolve(a); ok {
					for _, h := range person.Handles {
						handles = append(handles, h.Raw)
					}
				}
			}
			allowed := false
			for _, h := range handles {
				d := p.AllowHandle(h)
				if d.Reason == policy.ReasonBlocked {
					return false, nil
				}
				allowed = allowed || d.Allowed
			}
			if !allowed {
				return false, nil
			}
		}
		return true, nil
	}
}

// FileBook loads the configured contacts paths once a minute at most.
func FileBook(paths []string, region string) BookSource {
	if len(paths) == 0 {
		return nil
	}
	var mu sync.Mutex
	var b *contacts.Book
	var at time.Time
	return func(ctx context.Context) (*contacts.Book, error) {
		mu.Lock()
		defer mu.Unlock()
		if b != nil && time.Since(at) < time.Minute {
			return b, nil
		}
		var srcs []contacts.Source
		for _, p := range paths {
			if s, err := contacts.DetectSource(p); err == nil {
				srcs = append(srcs, s)
			}
		}
		cards, _ := contacts.Load(ctx, srcs)
		nb, err := contacts.NewBook(cards, region)
		if err != nil {
			return nil, err
		}
		b, at = nb, time.Now()
		return b, nil
	}
}
