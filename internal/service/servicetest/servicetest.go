// Package servicetest builds real data sets for tests of the query layer
// and its surfaces (MCP tools, CLI): the demo data (internal/imessage/demo)
// and a hand-built chat.db with hostile message bodies, secrets, ambiguous
// names and a blocked thread full of sentinel tokens. Both go through the
// real pipeline: chat.db on the real schema → imessage reader → index
// (with the read policy as its Policy) → service.
//
// It is for tests only; nothing in the product imports it.
package servicetest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// Now is the pinned clock of every data set.
var Now = testclock.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)

// Zone is the owner's time zone in results (the demo's PST).
var Zone = time.FixedZone("PST", -8*3600)

// Env is an opened data set.
type Env struct {
	Dir     string // data folder (chat.db, contacts.vcf, Attachments/)
	Home    string // TIDINGS_HOME: index.db and contacts/ policy files
	ChatDB  string
	VCF     string
	Index   *index.Index
	Gate    *service.Gate
	Store   *service.SQLStore
	Service *service.Service
	// Files is a folder tests may save attachments into (a profile's
	// file_dirs).
	Files   string
	Stories []demo.Story
	Reader  *imessage.Reader
}

// Options select how an Env is opened.
type Options struct {
	// Blocked are entries written to contacts/blocked_chats.txt before
	// the first sync.
	Blocked []string
	// Mode is the read-policy mode ("" = blocklist); Allowed the allowlist.
	Mode    policy.Mode
	Allowed []string
	// NoEmbed skips the embedder (full text only).
	NoEmbed bool
	// Summarizer and SummaryWait go to service.Options.
	Summarizer  service.DossierSummarizer
	SummaryWait time.Duration
	// SemanticOff goes to service.Options.
	SemanticOff string
}

// Demo generates the demo data with about n messages and opens it.
func Demo(t testing.TB, n int, o Options) *Env {
	t.Helper()
	dir := t.TempDir()
	res, err := demo.Generate(context.Background(), demo.Options{Dir: dir, Messages: max(n, demo.MinMessages()), Seed: 1, Now: Now})
	if err != nil {
		t.Fatal(err)
	}
	e := open(t, dir, res.ChatDB, res.Contacts, o)
	e.Stories = res.Stories
	return e
}

// Open opens an existing chat.db and vCard file the way Demo and Fixture
// do.
func Open(t testing.TB, dir, chatDB, vcf string, o Options) *Env {
	t.Helper()
	return open(t, dir, chatDB, vcf, o)
}

func open(t testing.TB, dir, chatDB, vcf string, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	e := &Env{Dir: dir, Home: home, ChatDB: chatDB, VCF: vcf, Files: filepath.Join(t.TempDir(), "saved")}
	if err := os.MkdirAll(e.Files, 0o700); err != nil {
		t.Fatal(err)
	}
	WritePolicy(t, home, o.Mode, o.Blocked, o.Allowed)
	store, err := policy.NewStore(home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Gate = service.NewGate(store)
	var emb index.Embedder
	if !o.NoEmbed {
		b, err := embed.New(embed.Config{Name: "builtin"})
		if err != nil {
			t.Fatal(err)
		}
		emb = b
	}
	now := func() time.Time { return Now }
	ix, err := index.Open(ctx, filepath.Join(home, "index.db"), index.Options{Embedder: emb, Policy: e.Gate, Now: now, Location: Zone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	e.Index = ix
	r, err := imessage.Open(ctx, chatDB, imessage.Options{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	e.Reader = r
	book := &service.FileBook{Paths: []string{vcf}, Region: "US",
		OnLoad: func(ctx context.Context, cards map[string][]model.Contact) error {
			for key, cs := range cards {
				if _, err := ix.LoadContacts(ctx, key, cs); err != nil {
					return err
				}
			}
			return nil
		}}
	if _, err := book.Book(ctx); err != nil {
		t.Fatal(err)
	}
	e.Sync(t)
	e.Store, err = service.OpenDossierStore(ctx, filepath.Join(home, "index.db"), now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Store.Close() })
	e.Service, err = service.New(service.Options{Index: ix, Gate: e.Gate, Contacts: book, Dossiers: e.Store, Attachments: r, Now: now, Location: Zone, Region: "US",
		Summarizer: o.Summarizer, SummaryWait: o.SummaryWait, SemanticOff: o.SemanticOff})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Sync syncs chat.db into the index again (after the test changed it).
func (e *Env) Sync(t testing.TB) {
	t.Helper()
	src := imessageindex.Source(e.Reader, "imessage", func() time.Time { return Now })
	if _, err := e.Index.Sync(context.Background(), index.SyncOptions{Embed: true}, src); err != nil {
		t.Fatal(err)
	}
}

// WritePolicy writes the read-policy files under home/contacts.
func WritePolicy(t testing.TB, home string, mode policy.Mode, blocked, allowed []string) {
	t.Helper()
	dir := filepath.Join(home, policy.ContactsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name string, lines []string) {
		var b []byte
		for _, l := range lines {
			b = append(b, l...)
			b = append(b, '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(policy.BlockedFile, blocked)
	write(policy.AllowedFile, allowed)
	if mode == "" {
		mode = policy.ModeBlocklist
	}
	write(policy.ReadPolicyFile, []string{string(mode)})
}

// RepoRoot returns the repository root (the folder holding go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}
