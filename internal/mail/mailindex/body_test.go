package mailindex

import (
	"context"
	"testing"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
)

// A sync with no Body option reads bodies with the service's own MIME
// reader (mail.Parse), so every charset mail_get_email shows is also
// searchable: the demo Maildir's ISO-2022-JP body is found by its words
// (docs/index.md, "Mail").
func TestSyncReadsBodiesWithTheServicesMIMEReader(t *testing.T) {
	dir, err := mail.WriteDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := mail.NewMaildir("Demo", dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, nil)
	if _, err := Sync(context.Background(), ix, b, Options{Own: []string{"me@example.com"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, query, subject string }{
		{"ISO-2022-JP body", "会議は明日です", "会議"},
		{"ISO-8859-1 body", "Vienes", "Reunión mañana"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ix.MailSearch(context.Background(), index.MailQuery{Text: tc.query, Mode: index.ModeFulltext})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || res.Hits[0].Subject != tc.subject {
				var got []string
				for _, h := range res.Hits {
					got = append(got, h.Subject)
				}
				t.Fatalf("search %q: hits %q, want the one mail %q", tc.query, got, tc.subject)
			}
		})
	}
}
