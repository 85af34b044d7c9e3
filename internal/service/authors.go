package service

import (
	"slices"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// authors decides, for one request, whose words may leave. A blocked
// thread is hidden whole, but a blocked person's messages can sit in a
// thread the policy allows: a group they left (they are no longer a
// member, so the thread does not name them), or one message row that
// chat.db joins to their thread and to another one. Their messages,
// their reactions and group events about them are dropped wherever they
// are. Only the blocklist counts (through the person-aware policy): in
// allowlist mode an allowed group still shows what its other members
// wrote.
type authors struct {
	p    *policy.Policy
	memo map[string]bool
}

func newAuthors(p *policy.Policy) *authors { return &authors{p: p, memo: map[string]bool{}} }

// hidden reports whether the blocklist matches handle.
func (a *authors) hidden(handle string) bool {
	if handle == "" {
		return false
	}
	h, ok := a.memo[handle]
	if !ok {
		h = a.p.AllowHandle(handle).Reason == policy.ReasonBlocked
		a.memo[handle] = h
	}
	return h
}

// visible returns m without a blocked person's reactions, and false when
// m itself is theirs or a group event about one of them.
func (a *authors) visible(m index.Message) (index.Message, bool) {
	if !m.FromMe && a.hidden(m.Sender) {
		return m, false
	}
	if g := m.GroupEvent; g != nil && a.hidden(g.Other) {
		return m, false
	}
	hiddenReaction := func(r index.Reaction) bool { return !r.FromMe && a.hidden(r.Sender) }
	if slices.ContainsFunc(m.Reactions, hiddenReaction) {
		m.Reactions = slices.DeleteFunc(slices.Clone(m.Reactions), hiddenReaction)
	}
	return m, true
}

// filter keeps the visible messages of ms.
func (a *authors) filter(ms []index.Message) []index.Message {
	out := make([]index.Message, 0, len(ms))
	for _, m := range ms {
		if v, ok := a.visible(m); ok {
			out = append(out, v)
		}
	}
	return out
}

// hiddenAuthor reports whether loc's message (an attachment's) is a
// blocked person's: attachment ids are small guessable integers, so an
// attachment must be refused where its message would be left out. The
// index returns the message's sender with the attachment.
func hiddenAuthor(p *policy.Policy, loc index.AttachmentLocation) bool {
	return !loc.FromMe && newAuthors(p).hidden(loc.Sender)
}
