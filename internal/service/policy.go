package service

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// PolicySource yields the current read policy; *policy.Store implements it
// (reloading the files when they change, failing closed on any problem).
type PolicySource interface {
	Current() (*policy.Policy, error)
}

// Gate is the read policy as the index and the service use it. It keeps a
// snapshot of the policy so that the index can ask about every thread of a
// sync or a listing without re-reading files each time: the snapshot is
// refreshed by every service request ([Gate.Refresh]) and, for the index's
// own calls, when it is older than gateMaxAge.
//
// It fails closed: while the policy cannot be loaded, no thread is allowed
// to be read. The index's writes never act on that: Gate implements
// index.PolicyPinner, so a sync or purge pins one loaded policy for all its
// decisions, and is refused — changing nothing — while the policy cannot be
// loaded (an unreadable policy must never purge the index).
type Gate struct {
	src PolicySource

	mu  sync.Mutex
	cur *policy.Policy
	err error
	at  time.Time // when the snapshot was taken (monotonic; cache age only)
	// pinned answers AllowConversation while pins > 0 (index.PolicyPinner).
	pinned *policy.Policy
	pins   int
}

var _ index.PolicyPinner = (*Gate)(nil)

// gateMaxAge bounds how stale the snapshot the index sees can be.
const gateMaxAge = 500 * time.Millisecond

var _ index.Policy = (*Gate)(nil)

var errNoPolicy = errors.New("no read policy loaded")

// NewGate returns a gate over src.
func NewGate(src PolicySource) *Gate { return &Gate{src: src} }

// StaticPolicy is a PolicySource that always returns one policy (tests,
// and callers that manage reloading themselves).
type StaticPolicy struct{ P *policy.Policy }

// Current implements PolicySource.
func (s StaticPolicy) Current() (*policy.Policy, error) { return s.P, nil }

// Refresh reloads the policy now and returns it (or the load error).
func (g *Gate) Refresh() (*policy.Policy, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refreshLocked()
}

func (g *Gate) refreshLocked() (*policy.Policy, error) {
	p, err := g.src.Current()
	if err == nil && p == nil {
		err = errNoPolicy
	}
	g.cur, g.err, g.at = p, err, time.Now()
	if err != nil {
		g.cur = nil
	}
	return g.cur, g.err
}

// snapshot returns the current policy, refreshing a stale snapshot.
func (g *Gate) snapshot() *policy.Policy {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() || time.Since(g.at) > gateMaxAge {
		g.refreshLocked()
	}
	return g.cur
}

// Info describes the current policy for status output (no entries).
func (g *Gate) Info() (policy.Info, error) {
	p, err := g.Refresh()
	if err != nil {
		return policy.Info{}, err
	}
	return p.Info(), nil
}

// AllowConversation implements index.Policy: the whole conversation, with
// every participant, is checked, against the pinned policy while the index
// holds a pin.
func (g *Gate) AllowConversation(c model.Conversation) bool {
	g.mu.Lock()
	p := g.pinned
	g.mu.Unlock()
	if p == nil {
		p = g.snapshot()
	}
	return p.AllowThread(policy.ThreadOf(c)).Allowed
}

// PinPolicy implements index.PolicyPinner: it loads the policy now and
// answers AllowConversation from that load until every pin is released. A
// pin taken while another is held shares its policy, so one operation
// never sees two policies. It fails, pinning nothing, when the policy
// cannot be loaded.
func (g *Gate) PinPolicy() (string, func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pins == 0 {
		p, err := g.refreshLocked()
		if err != nil {
			return "", nil, err
		}
		g.pinned = p
	}
	g.pins++
	var once sync.Once
	release := func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.pins--; g.pins == 0 {
				g.pinned = nil
			}
		})
	}
	return g.pinned.Fingerprint(), release, nil
}

// PolicyFingerprint implements index.PolicyPinner: the fingerprint of the
// current policy (the snapshot, at most gateMaxAge old), or the load error.
func (g *Gate) PolicyFingerprint() (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() || time.Since(g.at) > gateMaxAge {
		g.refreshLocked()
	}
	if g.err != nil {
		return "", g.err
	}
	if g.cur == nil {
		return "", errNoPolicy
	}
	return g.cur.Fingerprint(), nil
}

// allowConv checks a conversation as the query layer returns it. Its
// participant list may be cut at ten (the index checked the full list);
// this is the second check.
func allowConv(p *policy.Policy, c index.Conversation) bool {
	t := policy.Thread{Identifier: c.Identifier, GUID: c.ID, Group: c.Kind == model.KindGroup}
	for _, pt := range c.Participants {
		t.Participants = append(t.Participants, pt.Handle)
	}
	return p.AllowThread(t).Allowed
}

// allowRef checks a conversation reference (identifier and guid only).
func allowRef(p *policy.Policy, r index.ConversationRef) bool {
	t := policy.Thread{Identifier: r.Identifier, GUID: r.ID, Group: r.Kind == model.KindGroup}
	return p.AllowThread(t).Allowed
}

// allowPerson reports whether a contact may be shown, and which of their
// handles: every handle must pass AllowHandle in blocklist mode (a person
// with any blocked handle is hidden entirely: blocking someone's number
// must not leave their name and e-mail on display); in allowlist mode only
// the allowed handles are kept, and a person without any is hidden.
func allowPerson(p *policy.Policy, handles []string) ([]string, bool) {
	var kept []string
	for _, h := range handles {
		if strings.TrimSpace(h) == "" {
			continue
		}
		d := p.AllowHandle(h)
		switch {
		case d.Allowed:
			kept = append(kept, h)
		case d.Reason == policy.ReasonBlocked:
			return nil, false
		}
	}
	return kept, len(kept) > 0
}
