package mail

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// mail_search (docs/tools.md, "mail_search"): hybrid search over the mail
// synced into the index (internal/mail/mailindex), with the seed's
// filters. The index holds no blocked person's mail and no secret in its
// searchable text (docs/index.md, "Mail"); this file applies the scope
// fields mail_accounts / mail_mailboxes and the output rule.

// SearchOptions are what mail_search needs from the service.
type SearchOptions struct {
	// Index returns the index mail is synced into.
	Index func(ctx context.Context) (*index.Index, error)
	// Location reads date-only bounds and shows dates (the user's time
	// zone); nil means UTC.
	Location *time.Location
}

// searchSnippets redacts snippets with every class (a code in a mail is masked
// like one in a message; the index already blanked what it found).
var searchSnippets = output.New(redact.Default())

var searchLimit = coerce.IntSpec{Name: "limit", Default: index.DefaultLimit, Min: 1, Max: 50, Clamp: true}

type searchIn struct {
	Query    string        `json:"query,omitempty" jsonschema:"words or a question (omit to list newest first)"`
	Account  string        `json:"account,omitempty"`
	Mailbox  string        `json:"mailbox,omitempty" jsonschema:"a path or leaf name (Account/Path also accepted)"`
	From     string        `json:"from,omitempty" jsonschema:"part of the sender's name or address"`
	DateFrom string        `json:"date_from,omitempty" jsonschema:"ISO-8601; date_to inclusive"`
	DateTo   string        `json:"date_to,omitempty"`
	Unread   *bool         `json:"unread,omitempty"`
	Limit    coerce.Number `json:"limit,omitzero" jsonschema:"1-50 (default 10)"`
	Cursor   string        `json:"cursor,omitempty"`
}

type searchHit struct {
	Account string `json:"account"`
	Mailbox string `json:"mailbox"`
	UID     uint32 `json:"uid"`
	Subject string `json:"subject"`
	From    string `json:"from"`
	Date    string `json:"date"`
	Unread  bool   `json:"unread"`
	Snippet string `json:"snippet,omitempty"`
}

type searchOut struct {
	Hits         []searchHit    `json:"hits"`
	Mode         string         `json:"mode"`
	ScanComplete bool           `json:"scan_complete"`
	Hidden       int            `json:"hidden,omitempty"`
	Notes        []string       `json:"notes,omitempty"`
	Page         mcpserver.Page `json:"page"`
}

var searchOutSchema = &jsonschema.Schema{Type: "object", Required: []string{"hits", "mode", "scan_complete", "page"},
	Properties: map[string]*jsonschema.Schema{
		"hits": {Type: "array", Items: &jsonschema.Schema{Type: "object"},
			Description: "best first: account, mailbox, uid (for mail_get_email), subject, from, date, unread, snippet (wrapped, **matches**)"},
		"mode":          {Type: "string"},
		"scan_complete": {Type: "boolean", Description: "false: a match may be missing"},
		"hidden":        {Type: "integer"},
		"notes":         {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		"page":          {Type: "object"},
	}}

// SearchTool builds mail_search over the index o.Index returns.
func SearchTool(o SearchOptions) mcpserver.Tool {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_search", Title: "Search mail",
		Description: "Search the user's synced e-mail by words and meaning (hybrid), newest first without a query.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true, OutputSchema: searchOutSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
		// The query is embedded through the configured embedder.
		OpenWorldVia: []mcpserver.Endpoint{mcpserver.EndpointEmbedder},
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[searchIn, searchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			out, err := searchRun(ctx, o, loc, in)
			return nil, out, err
		}
	})
}

func searchRun(ctx context.Context, o SearchOptions, loc *time.Location, in searchIn) (searchOut, error) {
	limit, err := coerce.Int(in.Limit, searchLimit)
	if err != nil {
		return searchOut{}, err
	}
	offset := 0
	if c := strings.TrimSpace(in.Cursor); c != "" {
		if offset, err = strconv.Atoi(c); err != nil || offset < 0 || offset >= index.MaxDepth {
			return searchOut{}, errors.New("cursor must be the next_cursor of a previous mail_search with the same arguments")
		}
	}
	since, until, err := searchDateRange(in.DateFrom, in.DateTo, loc)
	if err != nil {
		return searchOut{}, err
	}
	if o.Index == nil {
		return searchOut{}, errors.New("mail is not synced into the index in this process")
	}
	ix, err := o.Index(ctx)
	if err != nil {
		return searchOut{}, err
	}
	boxes, err := ix.MailMailboxes(ctx)
	if err != nil {
		return searchOut{}, err
	}
	ids, err := searchScopedMailboxes(ctx, boxes, in.Account, in.Mailbox)
	if err != nil {
		return searchOut{}, err
	}
	q := index.MailQuery{Text: in.Query, Mailboxes: ids, From: in.From, Since: since, Until: until, Unread: in.Unread,
		Limit: min(limit, index.MaxDepth-offset), Offset: offset}
	res, err := ix.MailSearch(ctx, q)
	if errors.Is(err, index.ErrBadQuery) {
		return searchOut{}, errors.New(strings.TrimSuffix(err.Error(), ": "+index.ErrBadQuery.Error()))
	}
	if err != nil {
		return searchOut{}, err
	}
	out := searchOut{Hits: []searchHit{}, Mode: string(res.Mode), ScanComplete: res.ScanComplete, Hidden: res.Hidden, Notes: res.Notes}
	if len(boxes) == 0 {
		out.Notes = append(out.Notes, "no mail has been synced yet (`tidings index` syncs the configured accounts)")
	}
	if res.Hidden > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%s hidden: a correspondent is blocked by the read policy", output.Count(res.Hidden, "match")))
	}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, searchHitOut(h, loc))
	}
	kept, page, err := mcpserver.Cut(out.Hits, 1024, func(n int) string { return strconv.Itoa(offset + n) })
	if err != nil {
		return searchOut{}, err
	}
	if len(kept) == len(out.Hits) && res.More && offset+len(kept) < index.MaxDepth {
		page.Truncated, page.NextCursor = true, strconv.Itoa(offset+len(kept))
	}
	out.Hits, out.Page = kept, page
	return out, nil
}

// searchHitOut applies the output rule: subject and sender through output.Name
// (redacted, one line, escaped), the snippet redacted and wrapped as
// untrusted content.
func searchHitOut(h index.MailHit, loc *time.Location) searchHit {
	from := h.From.Addr
	if h.From.Name != "" {
		from = h.From.Name + " <" + h.From.Addr + ">"
	}
	s := searchHit{Account: output.Name(h.Account), Mailbox: output.Name(h.Mailbox), UID: h.UID, Subject: output.Name(h.Subject),
		From: output.Name(from), Date: h.Date.In(loc).Format(time.RFC3339), Unread: h.Unread}
	if strings.TrimSpace(h.Snippet) != "" {
		s.Snippet = output.Wrapped(searchSnippets.Body(h.Snippet, nil))
	}
	return s
}

// searchScopedMailboxes returns the synced mailboxes a call may search, as
// index IDs: the scope (mail_accounts AND mail_mailboxes) narrowed by the
// account and mailbox arguments. nil means every mailbox (no scope and no
// argument). An explicit account or mailbox outside the scope is refused
// as a scope violation that does not say whether it exists.
func searchScopedMailboxes(ctx context.Context, boxes []index.MailMailbox, account, mailbox string) ([]int64, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return nil, err
	}
	account, mailbox = strings.TrimSpace(account), strings.TrimSpace(mailbox)
	if account != "" {
		account = output.NameForms(account)[len(output.NameForms(account))-1]
	}
	if mailbox != "" {
		mailbox = output.NameForms(mailbox)[len(output.NameForms(mailbox))-1]
	}
	rows := make([]scope.Row, len(boxes))
	for i, b := range boxes {
		rows[i] = scope.Row{Account: b.Account, Name: b.Path, ID: strconv.FormatInt(b.ID, 10)}
	}
	sr := sc.Rows(scope.Mail, rows)
	sr.Noun = "mailbox"
	if sc.Unrestricted() && account == "" && mailbox == "" {
		return nil, nil
	}
	allowed, err := sr.Allowed()
	if err != nil {
		return nil, err
	}
	if account != "" {
		var keep []int
		for _, i := range allowed {
			if scope.Fold(rows[i].Account) == scope.Fold(account) {
				keep = append(keep, i)
			}
		}
		if len(keep) == 0 {
			if vals, inForce := sc.Values(scope.MailAccounts); inForce && !searchContainsFold(vals, account) || !searchAccountHas(rows, account) && searchHasNameScope(sc) {
				return nil, scope.Violationf("mail account %q is outside this client's scope", account)
			}
			return nil, fmt.Errorf("no mail of account %q has been synced", account)
		}
		allowed = keep
	}
	if mailbox != "" {
		i, err := searchResolveMailbox(sr, allowed, account, mailbox)
		if err != nil {
			return nil, err
		}
		allowed = []int{i}
	}
	ids := make([]int64, len(allowed))
	for k, i := range allowed {
		ids[k] = boxes[i].ID
	}
	return ids, nil
}

// searchResolveMailbox finds the mailbox an argument names among the allowed
// rows: by full path (within the account when one is given, or as
// Account/Path), then by a unique leaf name. Two carriers are refused
// with both named; a name matching nothing allowed goes through
// ScopedRows.Resolve, which refuses out-of-scope names as violations.
func searchResolveMailbox(sr scope.ScopedRows, allowed []int, account, mailbox string) (int, error) {
	k := scope.Fold(mailbox)
	match := func(key func(r scope.Row) string) []int {
		var hits []int
		for _, i := range allowed {
			if scope.Fold(key(sr.Rows[i])) == k {
				hits = append(hits, i)
			}
		}
		return hits
	}
	for _, key := range []func(r scope.Row) string{
		func(r scope.Row) string { return r.Name },
		func(r scope.Row) string { return r.Path() },
		func(r scope.Row) string { return r.Name[strings.LastIndex(r.Name, "/")+1:] },
	} {
		switch hits := match(key); {
		case len(hits) == 1:
			return hits[0], nil
		case len(hits) > 1:
			return -1, fmt.Errorf("mailbox %q names both %q and %q: pass account, or the full path", mailbox,
				output.Name(sr.Rows[hits[0]].Path()), output.Name(sr.Rows[hits[1]].Path()))
		}
	}
	name := mailbox
	if account != "" {
		name = account + "/" + mailbox
	}
	if _, err := scope.ParsePath(name); err != nil {
		return -1, fmt.Errorf("there is no synced mailbox %q: pass account too, or name it as Account/Path", mailbox)
	}
	_, err := sr.Resolve(name)
	if err == nil { // not reachable: Resolve's rows are the allowed ones
		err = fmt.Errorf("there is no synced mailbox %q", name)
	}
	return -1, err
}

func searchContainsFold(vals []string, v string) bool {
	for _, x := range vals {
		if scope.Fold(x) == scope.Fold(v) {
			return true
		}
	}
	return false
}

func searchAccountHas(rows []scope.Row, account string) bool {
	for _, r := range rows {
		if scope.Fold(r.Account) == scope.Fold(account) {
			return true
		}
	}
	return false
}

func searchHasNameScope(sc scope.Scope) bool {
	_, inForce := sc.Values(scope.MailMailboxes)
	return inForce
}

// searchDateRange reads date_from and date_to as search_messages does: ISO-8601
// dates (midnight in loc) or times; date_to is inclusive (a date covers
// its whole day).
func searchDateRange(from, to string, loc *time.Location) (since, until time.Time, err error) {
	parse := func(name, v string) (time.Time, bool, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return time.Time{}, false, nil
		}
		if t, err := time.ParseInLocation("2006-01-02", v, loc); err == nil {
			return t, true, nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if t, err := time.ParseInLocation(layout, v, loc); err == nil {
				return t, false, nil
			}
		}
		return time.Time{}, false, fmt.Errorf("%s must be an ISO-8601 date such as 2026-11-30 or a time such as 2026-11-30T09:00:00-08:00 (got %q)", name, output.Name(searchClip(v, 40)))
	}
	if since, _, err = parse("date_from", from); err != nil {
		return
	}
	var dateOnly bool
	if until, dateOnly, err = parse("date_to", to); err != nil {
		return
	}
	switch {
	case until.IsZero():
	case dateOnly:
		until = time.Date(until.Year(), until.Month(), until.Day()+1, 0, 0, 0, 0, loc)
	default:
		until = until.Add(time.Millisecond) // the index keeps milliseconds
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return time.Time{}, time.Time{}, errors.New("date_from must not be after date_to")
	}
	return since, until, nil
}

func searchClip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
