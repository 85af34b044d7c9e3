package service_test

import (
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// BenchmarkCalls measures the query layer's main calls on the demo data
// (20,000 messages, built-in embedder), as the tools make them.
func BenchmarkCalls(b *testing.B) {
	env := servicetest.Demo(b, 20000, servicetest.Options{})
	for _, bc := range []struct {
		name string
		fn   func() error
	}{
		{"list_conversations", func() error { _, err := env.Service.ListConversations(ctx, service.ListParams{}); return err }},
		{"messages_by_name", func() error {
			_, err := env.Service.Messages(ctx, service.MessagesParams{Chat: "Sam Rivera"})
			return err
		}},
		{"search_hybrid", func() error {
			_, err := env.Service.Search(ctx, service.SearchParams{Query: "the money Sam owes me", Context: 2})
			return err
		}},
		{"review_2d", func() error { _, err := env.Service.Review(ctx, service.ReviewParams{Days: 2}); return err }},
		{"review_90d", func() error { _, err := env.Service.Review(ctx, service.ReviewParams{Days: 90}); return err }},
		{"response_stats_30d", func() error {
			_, err := env.Service.ResponseStats(ctx, service.StatsParams{Chat: "Mom", Hours: 720})
			return err
		}},
		{"dossier_stored", func() error {
			_, err := env.Service.Dossier(ctx, service.DossierParams{ContactID: "Sam Rivera"})
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
