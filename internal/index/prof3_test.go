package index

import (
	"context"
	"os"
	"testing"

	"github.com/tidings-mcp/tidings/internal/embed"
)

func TestProfileSearchLoop(t *testing.T) {
	dir := os.Getenv("TIDINGS_PROFILE_DIR")
	if dir == "" {
		t.Skip("manual")
	}
	emb, _ := embed.NewBuiltin()
	ix, err := Open(context.Background(), dir+"/index.db", Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := []string{"dinner", "tonight", "passport", "invoice", "birthday party", "running late",
		"what did Sam say about the party last week", "when is the dentist appointment",
		"can you pick up my keys", "\"book the table\"", "dinenr plans", "climb*",
		"money I still owe", "plans to eat out", "flight lands", "rent is due"}
	mode := Mode(os.Getenv("TIDINGS_PROFILE_MODE"))
	for i := 0; i < 20; i++ {
		for _, q := range qs {
			if _, err := ix.Search(context.Background(), Query{Text: q, Mode: mode}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
