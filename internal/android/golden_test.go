package android

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// importAll imports a file and returns everything it delivered, checking
// the delivery contract on the way: a conversation arrives once, before
// its first message.
func importAll(t *testing.T, path string, opts ImportOptions) (Result, []model.Conversation, []model.Message, error) {
	t.Helper()
	var convs []model.Conversation
	var msgs []model.Message
	known := map[string]bool{}
	sink := Sink{
		Conversations: func(cs []model.Conversation) error {
			for _, c := range cs {
				if known[c.ID] {
					t.Errorf("conversation %s delivered twice", c.ID)
				}
				known[c.ID] = true
			}
			convs = append(convs, cs...)
			return nil
		},
		Message: func(m model.Message) error {
			for _, id := range m.ConversationIDs {
				if !known[id] {
					t.Errorf("message %s delivered before its conversation %s", m.ID, id)
				}
			}
			msgs = append(msgs, m)
			return nil
		},
	}
	res, err := ReadFile(context.Background(), path, opts, sink)
	return res, convs, msgs, err
}

type golden struct {
	Result        Result               `json:"result"`
	Conversations []model.Conversation `json:"conversations"`
	Messages      []model.Message      `json:"messages"`
	Contacts      []model.Contact      `json:"contacts"`
}

func checkGolden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from the output (run go test -update and review the diff):\n%s", path, b)
	}
}

func TestImportGolden(t *testing.T) {
	for _, name := range []string{"full", "hostile"} {
		t.Run(name, func(t *testing.T) {
			res, convs, msgs, err := importAll(t, filepath.Join("testdata", name+".xml"), ImportOptions{Region: "US", Batch: 3})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name+".golden.json", golden{Result: res, Conversations: convs, Messages: msgs, Contacts: res.Contacts})
		})
	}
}
