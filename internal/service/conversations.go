package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// ReadWindowDays is the read window of the bridge protocol: review,
// search and chat_history look back at most this far on a host bridge, and
// the conversation listing is bounded by it (protocol 1.2 forbids a host an
// inventory of every thread: list_chats is manager-only, docs/bridge.md).
const ReadWindowDays = 90

// ReadWindowStart is the start of a read window of days ending now by the
// service's clock (pinned under TIDINGS_NOW). A surface that enforces the
// window on its answers (the bridge) takes it before it calls the service,
// so nothing the service returned for the window is dropped.
func (s *Service) ReadWindowStart(days float64) time.Time {
	return s.now().Add(-time.Duration(days * float64(24*time.Hour)))
}

// Participant is a conversation member other than the owner.
type Participant struct {
	Handle string `json:"handle"`
	// Name is the contact name, "" when the handle is not in contacts.
	Name string `json:"name,omitempty"`
}

// ConversationSummary is one conversation of list_conversations (the
// bridge's list_chats fields, with the conversation id of docs/tools.md).
type ConversationSummary struct {
	// ID is the conversation id get_conversation_messages takes.
	ID string `json:"id"`
	// ChatID is the bridge protocol's chat_id: the handle of a direct chat,
	// "chat…" for a group.
	ChatID           string        `json:"chat_id"`
	Kind             string        `json:"kind"`
	Label            string        `json:"label"`
	DisplayName      string        `json:"display_name,omitempty"`
	Participants     []Participant `json:"participants"`
	ParticipantCount int           `json:"participant_count"`
	Service          string        `json:"service,omitempty"`
	MessageCount     int64         `json:"message_count"`
	LastActivity     time.Time     `json:"last_activity"`
	// UnreadCount is the number of unread incoming messages in the window
	// (set when the list was asked for with UnreadOnly).
	UnreadCount int `json:"unread_count,omitempty"`
}

// ListParams are list_conversations' arguments.
type ListParams struct {
	// Limit bounds the list (default DefaultListLimit, at most
	// MaxListLimit); Offset skips that
	// many conversations first (paging).
	Limit  int
	Offset int
	// Days is the activity window, (0, ReadWindowDays]; 0 means
	// ReadWindowDays.
	Days float64
	// ExcludeGroups drops group conversations.
	ExcludeGroups bool
	// Query keeps conversations whose label, chat id or a participant
	// handle contains it (case-insensitive).
	Query string
	// UnreadOnly keeps the conversations with an unread incoming message
	// in the window (not counting people the policy hides) and reports
	// how many.
	UnreadOnly bool
}

// ConversationList is list_conversations' result.
type ConversationList struct {
	WindowDays    float64               `json:"window_days"`
	Count         int                   `json:"count"`
	Total         int                   `json:"total" jsonschema:"conversations active in the window that the read policy allows"`
	Truncated     bool                  `json:"truncated"`
	Conversations []ConversationSummary `json:"conversations"`
}

// ListConversations returns the conversations active in the last Days
// days, newest activity first, with resolved participant names. Threads
// the read policy hides are never listed, and nothing older than the read
// window is.
func (s *Service) ListConversations(ctx context.Context, prm ListParams) (ConversationList, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return ConversationList{}, err
	}
	days := prm.Days
	if days <= 0 || days > ReadWindowDays {
		days = ReadWindowDays
	}
	limit := prm.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	since := s.now().Add(-time.Duration(days * float64(24*time.Hour)))
	// Ask for everything in the window (the index caps at 500) so the
	// policy check below cannot make the list short.
	forms := output.NameForms(strings.TrimSpace(prm.Query))
	l, err := s.ix.ListConversations(ctx, index.ListOptions{Limit: 500, Since: since, ExcludeGroups: prm.ExcludeGroups, Query: forms[0]})
	if err == nil && len(l.Conversations) == 0 && len(forms) > 1 {
		// The escaped form of a name an answer showed (output.Name).
		l, err = s.ix.ListConversations(ctx, index.ListOptions{Limit: 500, Since: since, ExcludeGroups: prm.ExcludeGroups, Query: forms[1]})
	}
	if err != nil {
		return ConversationList{}, indexErr("list conversations", err)
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return ConversationList{}, err
	}
	var unread map[string]int
	if prm.UnreadOnly {
		bySender, err := s.ix.Unread(ctx, since)
		if err != nil {
			return ConversationList{}, indexErr("count unread messages", err)
		}
		a := newAuthors(p)
		unread = map[string]int{}
		for conv, senders := range bySender {
			for h, n := range senders {
				if !a.hidden(h) {
					unread[conv] += n
				}
			}
		}
	}
	out := ConversationList{WindowDays: days, Conversations: []ConversationSummary{}}
	for _, c := range l.Conversations {
		if !allowConv(p, c) || (unread != nil && unread[c.ID] == 0) {
			continue
		}
		out.Total++
		if out.Total > prm.Offset && len(out.Conversations) < limit {
			cs := s.summary(c, book)
			cs.UnreadCount = unread[c.ID]
			out.Conversations = append(out.Conversations, cs)
		}
	}
	if l.Truncated && unread == nil {
		out.Total += l.Total - len(l.Conversations) // allowed by the index's own check
	}
	out.Count = len(out.Conversations)
	out.Truncated = out.Total > prm.Offset+out.Count
	return out, nil
}

// summary converts an index conversation through the output boundary.
func (s *Service) summary(c index.Conversation, book *contacts.Book) ConversationSummary {
	cs := ConversationSummary{ID: c.ID, ChatID: output.Name(c.Identifier), Kind: string(c.Kind), DisplayName: output.Name(c.DisplayName),
		ParticipantCount: c.ParticipantCount, Service: output.Name(c.Service), MessageCount: c.MessageCount,
		LastActivity: s.ts(c.LastActivity), Participants: []Participant{}}
	for _, pt := range c.Participants {
		cs.Participants = append(cs.Participants, Participant{Handle: output.Name(pt.Handle), Name: output.Name(s.nameOf(pt.Handle, pt.Name, book))})
	}
	cs.Label = output.Name(s.label(c, book))
	return cs
}

// nameOf returns a handle's contact name: the index's, else the book's.
func (s *Service) nameOf(handle, indexName string, book *contacts.Book) string {
	if indexName != "" {
		return indexName
	}
	if book != nil {
		return book.DisplayName(handle)
	}
	return ""
}

// label is the group name, else the participants' names, else the chat id.
func (s *Service) label(c index.Conversation, book *contacts.Book) string {
	if c.DisplayName != "" {
		return c.DisplayName
	}
	if len(c.Participants) == 0 {
		return c.Label
	}
	var names []string
	for _, pt := range c.Participants {
		names = append(names, cmpOr(s.nameOf(pt.Handle, pt.Name, book), pt.Handle))
	}
	switch {
	case c.ParticipantCount <= 4 && len(names) == c.ParticipantCount:
		return strings.Join(names, ", ")
	default:
		return strings.Join(names[:min(3, len(names))], ", ") + fmt.Sprintf(" and %d more", c.ParticipantCount-min(3, len(names)))
	}
}

// target is what a chat reference resolved to.
type target struct {
	query string
	// person is set when the reference named a contact.
	person *contacts.Person
	// convs are the visible conversations, newest activity first.
	convs []index.Conversation
	// substr is the bridge protocol's resolved_substr: last ten digits, an
	// address or a chat id.
	substr string
}

// maxChatRef bounds a chat reference's length.
const maxChatRef = 200

// resolveChat maps a chat reference — a conversation id, a chat id, a
// phone number in any format, an e-mail address or a contact name — to the
// conversations it names. People resolve to their one-to-one chats (on
// every handle they have). A name matching several people is an *Error
// listing them; a reference nobody has is a not-found *Error, never an
// empty result.
//
// A reference that is not a plausible name, handle or id — punctuation
// alone, query syntax or wildcards (`" OR ""="`, "%", "*"), a number too
// short to be one ("+1") — selects nobody: it gets exactly the answer of a
// name nobody has, whatever the contacts or conversation names contain
// (docs/security.md, "Red-team tests").
//
// A name may come back in the escaped form output.Name wrote (`A &amp; B`
// for a group called `A & B`): when the reference as given names nothing,
// the text it stands for is tried (output.NameForms).
func (s *Service) resolveChat(ctx context.Context, p *policy.Policy, chat string) (target, error) {
	forms := output.NameForms(trimRef(chat))
	t, err := s.resolveChatForm(ctx, p, forms[0])
	if err != nil && len(forms) > 1 && errors.Is(err, ErrNotFound) {
		if t2, err2 := s.resolveChatForm(ctx, p, forms[1]); err2 == nil || !errors.Is(err2, ErrNotFound) {
			return t2, err2
		}
	}
	return t, err
}

// resolveChatForm is resolveChat for one form of the reference.
func (s *Service) resolveChatForm(ctx context.Context, p *policy.Policy, chat string) (target, error) {
	chat = trimRef(chat)
	t := target{query: chat}
	switch {
	case chat == "":
		return t, userErr("a conversation is required: give conversation_id (from list_conversations) or chat (a name, phone number, e-mail address or chat id)")
	case len(chat) > maxChatRef:
		return t, userErr("the conversation reference is longer than %d characters", maxChatRef)
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return t, err
	}
	unknown := func() error {
		if book == nil {
			return notFound("no conversation matches %q (no contacts source is configured, so names are matched against conversation names only; a phone number or e-mail address always works)", output.Name(chat))
		}
		return notFound("no contact or conversation matches %q in the messages Tidings can read; try lookup_contacts, a phone number or an e-mail address", output.Name(chat))
	}
	if !hasRune(chat, unicode.IsLetter, unicode.IsDigit, isSymbol) {
		return t, unknown()
	}
	keep := func(c index.Conversation) bool { return allowConv(p, c) }

	// A phone number or an e-mail address: that person's direct chats — on
	// every handle of theirs when the address book knows them.
	if isHandleLike(chat) {
		t.substr = substrOf(chat)
		if t.substr == "" {
			return t, userErr("%q is not a phone number or e-mail address Tidings can read", output.Name(chat))
		}
		if !p.AllowHandle(chat).Allowed {
			return t, notFound("there is no conversation with %s in the messages Tidings can read", output.Name(chat))
		}
		handles := []string{chat}
		if book != nil {
			if pp, ok := book.Resolve(chat); ok {
				if hs, allowed := allowPerson(p, handleKeys(pp)); allowed {
					t.person = &pp
					handles = append(handles, hs...)
				}
			}
		}
		if err := s.directConvs(ctx, &t, handles, keep); err != nil {
			return t, err
		}
		if len(t.convs) == 0 {
			return t, notFound("there is no conversation with %s in the messages Tidings can read", output.Name(chat))
		}
		return t, nil
	}

	// An exact conversation id or chat id.
	if _, err := s.ix.Conversation(ctx, chat); err == nil {
		cs, err := s.ix.ResolveConversations(ctx, chat, false)
		if err != nil {
			return t, indexErr("resolve conversation", err)
		}
		t.convs = slices.DeleteFunc(cs, func(c index.Conversation) bool { return !keep(c) })
		if len(t.convs) > 0 {
			t.substr = output.Name(t.convs[0].Identifier)
			return t, nil
		}
	} else if !errors.Is(err, index.ErrNotFound) {
		return t, indexErr("resolve conversation", err)
	}

	// Past this point the reference is a name. Digits and punctuation
	// alone are not one: a number is a handle (above) or nothing, never a
	// substring of some conversation's label.
	if !hasRune(chat, unicode.IsLetter, isSymbol) {
		return t, unknown()
	}

	// A contact name.
	if book != nil {
		pp, err := book.ResolveName(chat, func(pp contacts.Person) bool { _, ok := allowPerson(p, handleKeys(pp)); return ok })
		var amb *contacts.AmbiguousError
		switch {
		case errors.As(err, &amb):
			return t, s.ambiguous(p, book, chat, amb)
		case err == nil:
			t.person = &pp
			hs, _ := allowPerson(p, handleKeys(pp))
			if err := s.directConvs(ctx, &t, hs, keep); err != nil {
				return t, err
			}
			if len(hs) > 0 {
				t.substr = substrOf(hs[0])
			}
			if len(t.convs) == 0 {
				return t, notFound("%s is in your contacts, but there is no conversation with them in the messages Tidings can read", output.Name(pp.Name))
			}
			return t, nil
		case !errors.Is(err, contacts.ErrNoMatch):
			return t, userErr("%q cannot be looked up as a name: give a shorter name, a phone number or an e-mail address", output.Name(chat))
		}
	}

	// A conversation's name (a group title) or, without contacts, a name
	// the index knows.
	l, err := s.ix.ListConversations(ctx, index.ListOptions{Limit: 500, Query: chat})
	if err != nil {
		return t, indexErr("resolve conversation", err)
	}
	var named []index.Conversation
	for _, c := range l.Conversations {
		if keep(c) && strings.Contains(strings.ToLower(s.label(c, book)), strings.ToLower(chat)) {
			named = append(named, c)
		}
	}
	switch {
	case len(named) == 1:
		t.convs = named
		t.substr = output.Name(named[0].Identifier)
		return t, nil
	case len(named) > 1:
		var labels []string
		for _, c := range named[:min(len(named), 8)] {
			labels = append(labels, fmt.Sprintf("%s (conversation_id %s)", output.Name(s.label(c, book)), c.ID))
		}
		more := ""
		if len(named) > 8 {
			more = fmt.Sprintf(" and %d more", len(named)-8)
		}
		return t, userErr("%q matches %d conversations: %s%s; ask the user which one and pass its conversation_id", output.Name(chat), len(named), strings.Join(labels, "; "), more)
	}
	return t, unknown()
}

// trimRef trims a person or conversation reference: white space and
// invisible format characters (zero-width space, word joiner, BOM) at
// either end, so a reference of nothing visible is an empty one.
func trimRef(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
}

// isSymbol reports an "other symbol" (emoji, ❤): group titles and
// nicknames can be written in them, unlike in math or currency signs.
func isSymbol(r rune) bool { return unicode.Is(unicode.So, r) }

// hasRune reports whether s has a rune any of the classes accept.
func hasRune(s string, classes ...func(rune) bool) bool {
	for _, r := range s {
		for _, c := range classes {
			if c(r) {
				return true
			}
		}
	}
	return false
}

// directConvs adds the visible one-to-one conversations of handles to t,
// newest activity first.
func (s *Service) directConvs(ctx context.Context, t *target, handles []string, keep func(index.Conversation) bool) error {
	seen := map[string]bool{}
	for _, c := range t.convs {
		seen[c.ID] = true
	}
	for _, h := range handles {
		cs, err := s.ix.ResolveConversations(ctx, h, true)
		if err != nil && !errors.Is(err, index.ErrNotFound) {
			return indexErr("resolve conversation", err)
		}
		for _, c := range cs {
			if !seen[c.ID] && keep(c) {
				seen[c.ID] = true
				t.convs = append(t.convs, c)
			}
		}
	}
	sort.SliceStable(t.convs, func(i, j int) bool { return t.convs[i].LastActivity.After(t.convs[j].LastActivity) })
	return nil
}

// ambiguous builds the error for a name that matches several people.
func (s *Service) ambiguous(p *policy.Policy, book *contacts.Book, query string, amb *contacts.AmbiguousError) *Error {
	e := &Error{}
	var parts []string
	for i, m := range amb.Candidates {
		pp, ok := book.Person(m.PersonID)
		if !ok {
			continue
		}
		cm := s.contactMatch(p, pp, false)
		e.Candidates = append(e.Candidates, cm)
		if i < 10 {
			parts = append(parts, describeMatch(cm))
		}
	}
	more := ""
	if amb.Total > len(parts) {
		more = fmt.Sprintf(" and %d more", amb.Total-len(parts))
	}
	e.Msg = fmt.Sprintf("%q matches %d people: %s%s; ask the user which one they mean and pass that person's phone number or e-mail address",
		output.Name(query), amb.Total, strings.Join(parts, "; "), more)
	return e
}

func describeMatch(m ContactMatch) string {
	switch {
	case m.PhoneLast10 != "":
		return fmt.Sprintf("%s (phone ending %s)", m.Name, m.PhoneLast10)
	case m.Email != "":
		return fmt.Sprintf("%s (%s)", m.Name, m.Email)
	}
	return m.Name
}

// substrOf is the bridge protocol's resolved_substr of a handle: the last ten
// digits of a phone, the lower-case address of an e-mail.
func substrOf(h string) string {
	if strings.Contains(h, "@") {
		return strings.ToLower(output.Name(strings.TrimSpace(h)))
	}
	return contacts.Last10(h)
}

// ConversationRef identifies a conversation in message results.
type ConversationRef struct {
	ID     string `json:"id"`
	ChatID string `json:"chat_id"`
	Label  string `json:"label"`
	Kind   string `json:"kind"`
}

func (s *Service) ref(c index.Conversation, book *contacts.Book) ConversationRef {
	return ConversationRef{ID: c.ID, ChatID: output.Name(c.Identifier), Label: output.Name(s.label(c, book)), Kind: string(c.Kind)}
}

func refOf(r index.ConversationRef) ConversationRef {
	return ConversationRef{ID: r.ID, ChatID: output.Name(r.Identifier), Label: output.Name(r.Label), Kind: string(r.Kind)}
}

// kindOf names a model kind for output ("text" when unset).
func kindOf(k model.MessageKind) string {
	if k == "" {
		return string(model.MsgText)
	}
	return string(k)
}
