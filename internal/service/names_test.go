package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// NotNameRefs are chat/contact values that are not a name, a handle or an
// id: query syntax, wildcards, punctuation alone, numbers too short to be
// one. Each must answer like a name nobody has, whatever the contacts
// hold ("Orla O'Brien-Quinn Jr." in nameFixture has every punctuation
// mark a name can carry, and a first name starting with "Or").
var notNameRefs = []string{
	`" OR ""="`, `' OR 1=1 --`, `OR 1=1`, `"or"`, `Or%`, `Or*`, `O_la`, `or.*`, `%`, `%%`, `*`, `_`, `?`, `-`, `'`, `.`, `,`, `"`, `=`,
	`--`, `...`, `()`, `+`, `+1`, `(1)`, `12`, `@`, `@@`, `;-;`, `\`, "-'.",
}

// invisibleRefs trim to nothing and answer like an empty reference.
var invisibleRefs = []string{" ", "\u00a0", "\u200b", "\ufeff \u200b", "\u2060\t"}

// nameFixture is the service fixture plus a card whose name starts with
// "Or" and carries an apostrophe, a hyphen and a period, on the number
// that has a thread and no card.
func nameFixture(t *testing.T) *servicetest.Env {
	t.Helper()
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	servicetest.AddCard(t, vcf, "fx-card-orla", "Orla O'Brien-Quinn Jr.", "O'Brien-Quinn", "Orla", servicetest.NoCardPhone)
	return servicetest.Open(t, dir, chatDB, vcf, servicetest.Options{NoEmbed: true, Blocked: []string{servicetest.BlockedPhone}})
}

// TestReferencesThatAreNotNamesResolveToNobody pins that a chat or contact
// value that is not a plausible name, handle or id never selects a person
// or a conversation: it answers exactly like an unknown name (not found,
// "no contact or conversation matches"), in every parameter that takes a
// reference, and lookup_contacts finds nobody for it. Real names and
// their punctuation still resolve (docs/security.md, "Red-team tests").
func TestReferencesThatAreNotNamesResolveToNobody(t *testing.T) {
	// The base fixture has the number without a card, labelled by its
	// number; nameFixture gives it Orla's card.
	for _, env := range []*servicetest.Env{servicetest.Fixture(t, servicetest.Options{NoEmbed: true}), nameFixture(t)} {
		adversarialRefs(t, env)
	}
	env := nameFixture(t)
	// The card resolves by its name, with its punctuation.
	for _, ref := range []string{"Orla", "orla o'brien", "O'Brien-Quinn", "Orla O'Brien-Quinn Jr.", "or", "quinn jr", "o\u2019brien"} {
		if _, err := env.Service.Messages(ctx, service.MessagesParams{Chat: ref}); err != nil {
			t.Errorf("%q: %v, want Orla's thread", ref, err)
		}
	}
}

func adversarialRefs(t *testing.T, env *servicetest.Env) {
	t.Helper()
	resolves := func(ref string) error {
		_, err := env.Service.Messages(ctx, service.MessagesParams{Chat: ref})
		return err
	}
	unknown := func(t *testing.T, what, ref string, err error) {
		t.Helper()
		var e *service.Error
		if !errors.As(err, &e) || !errors.Is(err, service.ErrNotFound) || !strings.Contains(e.Msg, "no contact or conversation matches") {
			t.Errorf("%s %q: err = %v, want the unknown-name answer", what, ref, err)
		}
	}
	for _, ref := range notNameRefs {
		t.Run(ref, func(t *testing.T) {
			unknown(t, "chat", ref, resolves(ref))
			_, err := env.Service.ResponseStats(ctx, service.StatsParams{Chat: ref})
			unknown(t, "stats chat", ref, err)
			_, err = env.Service.Search(ctx, service.SearchParams{Query: "dinner", Contact: ref})
			unknown(t, "search contact", ref, err)
			_, err = env.Service.Search(ctx, service.SearchParams{Query: "dinner", ConversationID: ref})
			unknown(t, "search conversation", ref, err)
			_, err = env.Service.Dossier(ctx, service.DossierParams{ContactID: ref})
			unknown(t, "dossier", ref, err)
			if l, err := env.Service.LookupContacts(ctx, service.LookupParams{Name: ref}); err == nil && l.Total != 0 {
				t.Errorf("lookup_contacts %q found %+v", ref, l.Matches)
			}
		})
	}
	for _, ref := range invisibleRefs {
		var e *service.Error
		if err := resolves(ref); !errors.As(err, &e) || !strings.Contains(e.Msg, "a conversation is required") {
			t.Errorf("%q: err = %v, want the empty-reference answer", ref, err)
		}
	}
}
