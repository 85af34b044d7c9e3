package blindeval

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"

	_ "modernc.org/sqlite"
)

// The blind sets' JSON (testdata/README.md §1–2).
type participant struct {
	Handle string  `json:"handle"`
	Name   *string `json:"name"`
}

type message struct {
	ID   string    `json:"id"`
	From string    `json:"from"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

type thread struct {
	ID           string        `json:"id"`
	Service      string        `json:"service"`
	Title        *string       `json:"title"`
	Participants []participant `json:"participants"`
	Messages     []message     `json:"messages"`
	Label        string        `json:"label"`
}

type query struct {
	ID        string         `json:"id"`
	Query     string         `json:"query"`
	Kind      string         `json:"kind"`
	Judgments map[string]int `json:"judgments"`
}

type dataset struct {
	AsOf    time.Time `json:"as_of"`
	Threads []thread  `json:"threads"`
	// search.json names its threads "conversations".
	Conversations []thread `json:"conversations"`
	Queries       []query  `json:"queries"`
}

func load(t *testing.T, half, name string) *dataset {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", half, name))
	if err != nil {
		t.Fatal(err)
	}
	var d dataset
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s/%s: %v", half, name, err)
	}
	if d.Threads == nil {
		d.Threads = d.Conversations
	}
	if d.AsOf.IsZero() || len(d.Threads) == 0 {
		t.Fatalf("%s/%s: no as_of or no threads", half, name)
	}
	return &d
}

// handleID is the handle as chat.db stores it: a phone written with spaces
// or punctuation becomes +digits (Messages stores E.164); e-mail
// addresses, short codes and alphanumeric sender ids stay as written.
func handleID(h string) string {
	h = strings.TrimSpace(h)
	if strings.Contains(h, "@") {
		return strings.ToLower(h)
	}
	var digits strings.Builder
	for _, r := range h {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return h // alphanumeric sender id
		}
	}
	d := digits.String()
	switch {
	case len(d) <= 6:
		return d // short code
	case strings.HasPrefix(h, "+"):
		return "+" + d
	case len(d) == 10:
		return "+1" + d
	default:
		return "+" + d
	}
}

// env is one data set opened the way `tidings serve` opens it: chat.db →
// imessage reader → index (built-in embedder) → service, served over MCP.
type env struct {
	svc  *service.Service
	cs   *mcp.ClientSession
	chat map[string]string // conversation_id (chat.db guid) → thread id
	now  time.Time
}

// build writes d's threads into a chat.db on the real macOS 15 schema
// (internal/imessage/chatdb) and a vCard file with every named
// participant, syncs them into a fresh index with the clock pinned to
// as_of, and connects an in-memory MCP client to a server over that index.
func build(t *testing.T, d *dataset) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	ddl, err := schemas.Tables("macos15")
	if err != nil {
		t.Fatal(err)
	}
	chatPath := filepath.Join(dir, "chat.db")
	db, err := sql.Open("sqlite", chatPath)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	w := chatdb.ForTest(t, db)
	e := &env{chat: map[string]string{}, now: d.AsOf}
	handles := map[string]int64{}
	var vcf strings.Builder
	named := map[string]bool{}
	guids := map[string]bool{}
	var rowid int64
	for ci, th := range d.Threads {
		service := th.Service
		if service == "" {
			service = "iMessage"
		}
		var members []int64
		for _, p := range th.Participants {
			id := handleID(p.Handle)
			h, ok := handles[id]
			if !ok {
				h = w.Handle(chatdb.Handle{ID: id, Service: service, Country: "us", Uncanonicalized: p.Handle})
				handles[id] = h
			}
			members = append(members, h)
			if p.Name != nil && !named[id] {
				named[id] = true
				fmt.Fprintf(&vcf, "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:blind-%d\r\nFN:%s\r\n", len(named), *p.Name)
				if strings.Contains(id, "@") {
					fmt.Fprintf(&vcf, "EMAIL:%s\r\n", p.Handle)
				} else {
					fmt.Fprintf(&vcf, "TEL;TYPE=CELL:%s\r\n", p.Handle)
				}
				vcf.WriteString("END:VCARD\r\n")
			}
		}
		c := chatdb.Chat{State: 3, Service: service, Handles: members}
		title := ""
		if th.Title != nil {
			title = *th.Title
		}
		c.DisplayName = &title
		if len(th.Participants) == 1 {
			c.Style, c.Identifier = 45, handleID(th.Participants[0].Handle)
			c.GUID = service + ";-;" + c.Identifier
			if guids[c.GUID] {
				// A second thread with the same person (the sets have
				// one): Messages keeps such a duplicate chat under the
				// "any" service prefix of recent macOS.
				c.GUID = "any;-;" + c.Identifier
			}
		} else {
			c.Style, c.Identifier = 43, fmt.Sprintf("chat%d", 900000+ci)
			c.GUID = service + ";+;" + c.Identifier
		}
		if guids[c.GUID] {
			t.Fatalf("%s: a third thread with the same person", th.ID)
		}
		guids[c.GUID] = true
		chatID := w.Chat(c)
		e.chat[c.GUID] = th.ID
		for _, m := range th.Messages {
			rowid++
			msg := chatdb.Message{ROWID: rowid, GUID: m.ID, Text: m.Text, Service: service, Date: chatdb.Nanos(m.At),
				Delivered: true, Finished: true, Read: true, PartCount: 1, Chats: []int64{chatID}}
			if m.From == "me" {
				msg.FromMe, msg.Sent = true, true
			} else {
				h, ok := handles[handleID(m.From)]
				if !ok {
					t.Fatalf("%s: sender %q is not a participant", m.ID, m.From)
				}
				msg.Handle = h
			}
			w.Message(msg)
		}
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	vcfPath := filepath.Join(dir, "contacts.vcf")
	if err := os.WriteFile(vcfPath, []byte(vcf.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	now := func() time.Time { return d.AsOf }
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, policy.ContactsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := policy.NewStore(home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate := service.NewGate(store)
	emb, err := embed.New(embed.Config{Name: "builtin"})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, filepath.Join(home, "index.db"), index.Options{Embedder: emb, Policy: gate, Now: now, Location: d.AsOf.Location()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	r, err := imessage.Open(ctx, chatPath, imessage.Options{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	book := &service.FileBook{Paths: []string{vcfPath}, Region: "US", OnLoad: pushCards(ix)}
	if _, err := book.Book(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, index.SyncOptions{Embed: true}, imessageindex.Source(r, "imessage", now)); err != nil {
		t.Fatal(err)
	}
	e.svc, err = service.New(service.Options{Index: ix, Gate: gate, Contacts: book, Now: now, Location: d.AsOf.Location(), Region: "US"})
	if err != nil {
		t.Fatal(err)
	}
	e.cs = serve(t, e.svc, now)
	return e
}

// pushCards stores every contact load in the index, as the serve wiring
// does (cmd/tidings contactBook), so labels and senders use the names.
func pushCards(ix *index.Index) func(ctx context.Context, cards map[string][]model.Contact) error {
	return func(ctx context.Context, cards map[string][]model.Contact) error {
		for key, cs := range cards {
			if _, err := ix.LoadContacts(ctx, key, cs); err != nil {
				return err
			}
		}
		return nil
	}
}

// serve connects a real MCP client (go-sdk, in memory) to a Tidings server
// over svc.
func serve(t *testing.T, svc *service.Service, now func() time.Time) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(&mcpserver.Deps{Messages: svc, Now: now, Version: "blind", Transport: "stdio"}, mcpserver.Filters{})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.SDK.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "blindeval", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and decodes its structured content into out; an
// isError result or a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		t.Fatalf("%s: isError: %s", name, text.String())
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
}

// unnamed reports whether a sender label is a handle rather than a name:
// the label equals the sender's handle, or has no letters at all.
func unnamed(label, handle string) bool {
	if label == "" || label == handle {
		return true
	}
	for _, r := range label {
		if unicode.IsLetter(r) {
			return false
		}
	}
	return true
}
