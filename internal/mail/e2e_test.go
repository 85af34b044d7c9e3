package mail

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// blockedAddr is the testdata Maildir's blocked sender (INBOX uid 7).
const blockedAddr = "mallory@blocked.example"

// policyHome writes a Tidings home whose read policy blocks lines of
// blocked and, with allow non-nil, is in allowlist mode allowing them.
func policyHome(t *testing.T, blocked, allow []string) *policy.Store {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, policy.ContactsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(policy.BlockedFile, strings.Join(blocked, "\n")+"\n")
	if allow != nil {
		write("read_policy.txt", "allowlist\n")
		write("allowed_chats.txt", strings.Join(allow, "\n")+"\n")
	}
	st, err := policy.NewStore(home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mailSet is a store of two accounts: "home", the testdata Maildir
// (read-only), and "work", go-imap's in-memory server holding the same
// INBOX; the policy blocks blockedAddr.
func mailSet(t *testing.T) *Store {
	t.Helper()
	work, _ := memIMAP(t, nil)
	home, err := NewMaildir("home", copyMaildir(t))
	if err != nil {
		t.Fatal(err)
	}
	return &Store{
		Backends: []Backend{home, work},
		Accounts: []AccountInfo{{Name: "home", Kind: "maildir", From: []string{"me@example.com"}},
			{Name: "work", Kind: "imap", From: []string{"me@example.com", "me@work.example"}, CanSend: true}},
		Self:  []string{"me@example.com", "me@work.example"},
		Allow: PolicyAllow(policyHome(t, []string{blockedAddr}, nil), nil),
		Now:   testclock.Anchor,
	}
}

// server is a server of the mail service under p with one MCP client
// (stdio and HTTP both run in TestEveryMailToolThroughAnMCPClient).
func server(t *testing.T, st *Store, p *mcpserver.Profile) map[string]*mcp.ClientSession {
	t.Helper()
	if p == nil {
		p = &mcpserver.Profile{Access: "write", AllowExternal: true}
	}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"mail"}, Profile: p}, Service(st))
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Sessions(t, srv)
}

func must(t *testing.T, cs *mcp.ClientSession, name, args string) map[string]any {
	t.Helper()
	isErr, text, data := mcptest.Call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %s: %s", name, args, text)
	}
	return data
}

func refused(t *testing.T, cs *mcp.ClientSession, name, args string) string {
	t.Helper()
	isErr, text, _ := mcptest.Call(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s %s succeeded, want a refusal", name, args)
	}
	return text
}

func list(v any) []any { l, _ := v.([]any); return l }

func field(v any, k string) any { m, _ := v.(map[string]any); return m[k] }

func TestEveryMailToolThroughAnMCPClient(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			files := t.TempDir()
			cs := server(t, mailSet(t), &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{files}})[transport]

			accts := list(must(t, cs, "mail_list_accounts", `{}`)["accounts"])
			if len(accts) != 2 || field(accts[1], "name") != "work" || field(accts[0], "read_only") != true {
				t.Fatalf("accounts = %v", accts)
			}
			var paths []string
			for _, m := range list(must(t, cs, "mail_list_mailboxes", `{}`)["mailboxes"]) {
				paths = append(paths, field(m, "path").(string))
			}
			for _, want := range []string{"home/INBOX", "home/Work/Projects", "work/INBOX", "work/Trash"} {
				if !slices.Contains(paths, want) {
					t.Errorf("mailboxes %v lack %s", paths, want)
				}
			}

			got := must(t, cs, "mail_get_emails", `{"account":"work","limit":3}`)
			emails := list(got["emails"])
			if len(emails) != 3 || field(emails[0], "uid") != 9.0 || field(got["page"], "next_cursor") != "6" || got["hidden"] != 1.0 {
				t.Fatalf("first page = %v", got)
			}
			got = must(t, cs, "mail_get_emails", `{"account":"work","cursor":"6"}`)
			if n := len(list(got["emails"])); n != 5 || got["hidden"] != nil {
				t.Fatalf("second page: %d emails, hidden %v (want 5, none: uid 7, the blocked sender, was on the first)", n, got["hidden"])
			}
			got = must(t, cs, "mail_get_emails", `{"account":"home","mailbox":"INBOX","unread_only":true}`)
			if n := len(list(got["emails"])); n != 5 {
				t.Fatalf("unread in home INBOX = %d, want 5", n)
			}

			email := must(t, cs, "mail_get_email", `{"account":"work","uid":4}`)
			if !strings.Contains(email["body"].(string), "Please find the invoice attached") || len(list(email["attachments"])) != 3 || email["body_from_html"] != true {
				t.Fatalf("invoice = %v", email)
			}
			saved := must(t, cs, "mail_save_attachment", `{"account":"work","uid":4,"part_id":"2","destination":"`+filepath.Join(files, "inv.pdf")+`"}`)
			if data, _ := os.ReadFile(filepath.Join(files, "inv.pdf")); string(data) != "%PDF-1.4 fake invoice\n" || saved["bytes"] != 22.0 {
				t.Fatalf("saved %v, file %q", saved, data)
			}
			src := must(t, cs, "mail_get_source", `{"account":"work","uid":3,"max_bytes":2048}`)
			if !strings.Contains(src["source"].(string), "Message-ID: &lt;reunion@example.es&gt;") {
				t.Fatalf("source = %v", src)
			}

			must(t, cs, "mail_mark_read", `{"account":"work","uids":[1,2]}`)
			must(t, cs, "mail_flag", `{"account":"work","uids":[3]}`)
			got = must(t, cs, "mail_get_emails", `{"account":"work","unread_only":true}`)
			for _, e := range list(got["emails"]) {
				if u := field(e, "uid"); u == 1.0 || u == 2.0 {
					t.Errorf("uid %v still unread after mail_mark_read", u)
				}
			}
			must(t, cs, "mail_move", `{"account":"work","uids":[5],"target_mailbox":"Projects"}`)
			must(t, cs, "mail_trash", `{"account":"work","uids":[6]}`)
			if n := len(list(must(t, cs, "mail_get_emails", `{"account":"work","mailbox":"Work/Projects"}`)["emails"])); n != 1 {
				t.Fatalf("Work/Projects holds %d after the move", n)
			}
			if n := len(list(must(t, cs, "mail_get_emails", `{"account":"work","mailbox":"Trash"}`)["emails"])); n != 1 {
				t.Fatalf("Trash holds %d after mail_trash", n)
			}

			d := must(t, cs, "mail_create_draft", `{"account":"work","to":["Ana <ana@example.org>"],"subject":"Plan","body":"Saturday?"}`)
			if d["from"] != "me@example.com" || d["mailbox"] != "Drafts" {
				t.Fatalf("draft = %v", d)
			}
			r := must(t, cs, "mail_reply_draft", `{"account":"work","uid":9,"body":"Great!","reply_all":true}`)
			if r["subject"] != "Re: Lunch on Thursday?" || len(list(r["to"])) != 1 || list(r["cc"])[0] != "bruno@example.org" {
				t.Fatalf("reply = %v", r)
			}
			drafts := list(must(t, cs, "mail_get_emails", `{"account":"work","mailbox":"Drafts"}`)["emails"])
			if len(drafts) != 2 {
				t.Fatalf("drafts = %v", drafts)
			}
			reply := must(t, cs, "mail_get_email", `{"account":"work","mailbox":"Drafts","uid":`+fmtNum(field(drafts[0], "uid"))+`}`)
			if reply["in_reply_to"] != "lunch-2@example.org" || !strings.Contains(reply["body"].(string), "Great!") {
				t.Fatalf("reply draft reads back as %v", reply)
			}
		})
	}
}

func fmtNum(v any) string {
	f, _ := v.(float64)
	return strconv.Itoa(int(f))
}

func TestMailboxResolvesByPathThenUniqueLeaf(t *testing.T) {
	mbs := []Mailbox{{Account: "work", Path: "INBOX"}, {Account: "work", Path: "Archive"}, {Account: "work", Path: "Projects/Archive"},
		{Account: "work", Path: "Projects/Sub"}, {Account: "home", Path: "INBOX"}, {Account: "home", Path: "Clients/Sub"}}
	for _, tc := range []struct {
		account, mailbox string
		want             int
		err              string
	}{
		{"work", "Archive", 1, ""},          // the path wins over the nested leaf
		{"work", "projects/archive", 2, ""}, // a path, ignoring case
		{"work", "Sub", 3, ""},              // a unique leaf in the account
		{"", "Sub", -1, `"work/Projects/Sub" or "home/Clients/Sub"`},
		{"", "INBOX", -1, `"work/INBOX" or "home/INBOX"`},
		{"", "home/INBOX", 4, ""},
		{"work", "", 0, ""},
		{"work", "Nope", -1, "there is no mailbox"},
		{"mars", "INBOX", -1, "no mail account"},
	} {
		i, err := ResolveMailbox(mbs, tc.account, tc.mailbox)
		if i != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ResolveMailbox(%q, %q) = %d, %v; want %d, %q", tc.account, tc.mailbox, i, err, tc.want, tc.err)
		}
	}
}

func TestScopeConfinesEveryMailTool(t *testing.T) {
	st := mailSet(t)
	for _, tc := range []struct {
		name    string
		profile mcpserver.Profile
		tool    string
		args    string
		refused string // "" = allowed
	}{
		{"accounts outside are not listed", mcpserver.Profile{MailAccounts: []string{"work"}}, "mail_list_accounts", `{}`, ""},
		{"an account outside is refused", mcpserver.Profile{MailAccounts: []string{"work"}}, "mail_get_emails", `{"account":"home"}`, "outside this client's scope"},
		{"a mailbox outside is refused", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_get_emails", `{"account":"work","mailbox":"Archive"}`, "outside this client's scope"},
		{"reading a message outside is refused", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_get_email", `{"account":"home","uid":1}`, "outside"},
		{"a move target outside is refused", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_move", `{"account":"work","uids":[1],"target_mailbox":"Archive"}`, "outside this client's scope"},
		{"trash outside the scope is not used", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_trash", `{"account":"work","uids":[1]}`, "no Trash mailbox this client may use"},
		{"drafts outside the scope are not used", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_create_draft", `{"account":"work","to":["ana@example.org"],"subject":"s","body":"b"}`, "no Drafts mailbox"},
		{"the default mailbox is within the scope", mcpserver.Profile{MailMailboxes: []string{"work/INBOX"}}, "mail_get_emails", `{}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.profile
			p.Access, p.AllowExternal = "write", true
			cs := server(t, st, &p)["stdio"]
			isErr, text, data := mcptest.Call(t, cs, tc.tool, tc.args)
			switch {
			case tc.refused == "" && isErr:
				t.Fatalf("refused: %s", text)
			case tc.refused != "" && (!isErr || !strings.Contains(text, tc.refused)):
				t.Fatalf("got %v %q, want a refusal with %q", isErr, text, tc.refused)
			}
			if tc.tool == "mail_list_accounts" && len(list(data["accounts"])) != 1 {
				t.Fatalf("accounts = %v", data)
			}
		})
	}
}

func TestReadOnlyProfileHasNoMailWrites(t *testing.T) {
	cs := server(t, mailSet(t), &mcpserver.Profile{Access: "read", AllowExternal: true})["stdio"]
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	for _, w := range []string{"mail_move", "mail_mark_read", "mail_flag", "mail_trash", "mail_create_draft", "mail_reply_draft", "mail_save_attachment"} {
		if slices.Contains(names, w) {
			t.Errorf("access = read registers %s", w)
		}
	}
	if !slices.Contains(names, "mail_get_email") {
		t.Errorf("read tools missing: %v", names)
	}
}

func TestReadPolicyMatchesPeopleThroughCards(t *testing.T) {
	// Carla's phone is blocked; her card ties it to carla@work.example.
	book, err := contacts.NewBook([]model.Contact{{Source: "vcard", ID: "c1", First: "Carla", Phones: []string{"+1 415 555 0142"}, Emails: []string{"carla@work.example"}},
		{Source: "vcard", ID: "c2", First: "Ana", Phones: []string{"+1 415 555 0199"}, Emails: []string{"ana@example.org"}}}, "US")
	if err != nil {
		t.Fatal(err)
	}
	books := func(context.Context) (*contacts.Book, error) { return book, nil }
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		blocked, allow []string
		addrs          []string
		want           bool
	}{
		{"blocked by a phone on the same card", []string{"+14155550142"}, nil, []string{"carla@work.example"}, false},
		{"one blocked correspondent hides the mail", []string{blockedAddr}, nil, []string{"ana@example.org", blockedAddr}, false},
		{"nobody blocked", []string{blockedAddr}, nil, []string{"ana@example.org"}, true},
		{"allowlist: allowed by the phone on her card", nil, []string{"+14155550199"}, []string{"ana@example.org"}, true},
		{"allowlist: every correspondent must be allowed", nil, []string{"ana@example.org"}, []string{"ana@example.org", "bruno@example.org"}, false},
	} {
		allow := PolicyAllow(policyHome(t, tc.blocked, tc.allow), books)
		if got, err := allow(ctx, tc.addrs); got != tc.want || err != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
