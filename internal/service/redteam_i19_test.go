package service_test

import (
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestRedTeamBlockedAuthorsThroughNewFilters: the filters issue 19 added
// — browsing without a query, unread_only, explicit dates — are new paths
// to a blocked person's words; none of them shows any (docs/security.md).
func TestRedTeamBlockedAuthorsThroughNewFilters(t *testing.T) {
	env := servicetest.RedTeam(t, servicetest.Options{NoEmbed: true})
	tokens := []string{servicetest.FormerMemberSentinel, servicetest.TwoChatSentinel, "Zanzisentinel", "+14155550002"}
	for _, q := range []service.SearchParams{
		{Limit: 100, Context: 5},
		{Limit: 100, DateFrom: "2000-01-01", DateTo: "2100-01-01"},
		{ConversationID: servicetest.FormerGroupID, Limit: 100},
	} {
		r, err := env.Service.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Errorf("browse %+v found nothing: the test would prove nothing", q)
		}
		mustNotContain(t, "browse", r, tokens...)
	}
	for _, p := range []service.MessagesParams{
		{Chat: servicetest.FormerGroupID, Limit: 200, UnreadOnly: true},
		{Chat: servicetest.FormerGroupID, Limit: 200, DateFrom: "2000-01-01", DateTo: "2100-01-01"},
	} {
		pg, err := env.Service.Messages(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "filtered history", pg, tokens...)
	}
	l, err := env.Service.ListConversations(ctx, service.ListParams{UnreadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "unread conversations", l, tokens...)
	rv, err := env.Service.Review(ctx, service.ReviewParams{Days: 90, UnreadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	mustNotContain(t, "unread review", rv, tokens...)
}
