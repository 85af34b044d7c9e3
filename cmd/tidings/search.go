package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service"
)

func init() {
	register(command{
		name:    "search",
		summary: "search the index: tidings search QUERY [--mode hybrid|fulltext|substring|semantic] [--json]",
		run:     runSearch,
	})
}

var searchFlags = queryFlags

const searchUsage = `Usage: tidings search QUERY [flags]

Searches the index built by 'tidings index' (your read policy applies;
secrets in messages are masked). QUERY can be a natural
question ("what did Sam say about the tickets last week"), words, a
"quoted phrase", or, with --mode substring, exact text to find.

Modes: hybrid (default: full text and meaning, fused), fulltext (BM25 over
words), substring (case-insensitive text, newest first), semantic (meaning
only). Every answer says whether the scan was complete.

Flags:
`

// boolFlag is a flag that may be absent, true or false.
type boolFlag struct{ v *bool }

func (b *boolFlag) String() string {
	if b.v == nil {
		return ""
	}
	return fmt.Sprint(*b.v)
}

func (b *boolFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		v := true
		b.v = &v
	case "false", "0", "no":
		v := false
		b.v = &v
	default:
		return fmt.Errorf("want true or false")
	}
	return nil
}

func (b *boolFlag) IsBoolFlag() bool { return true }

func runSearch(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "search", searchUsage)
	loader := config.Bind(fs, searchFlags...)
	mode := fs.String("mode", "hybrid", "hybrid, fulltext, substring or semantic")
	jsonOut := fs.Bool("json", false, "print the result as JSON (the search_messages fields, bodies not wrapped)")
	limit := fs.Int("limit", 10, "results per page (1-100)")
	conv := fs.String("conversation", "", "restrict to a conversation (id or chat identifier)")
	contact := fs.String("contact", "", "restrict to conversations with a person (name, phone, email)")
	days := fs.String("days", "", fmt.Sprintf("restrict to the last N days, more than 0 and at most %d", service.MaxSearchDays))
	var fromMe boolFlag
	fs.Var(&fromMe, "from-me", "only messages I sent (true) or received (false)")
	explain := fs.Bool("explain", false, "show each hit's score")
	cursor := fs.String("cursor", "", "continue from a previous result's next_cursor")
	literal := fs.Bool("literal-dates", false, "treat words like 'yesterday' as words, not date filters")
	from := fs.String("from", "", "only messages on or after this ISO-8601 date or time (a date is a day in the configured time zone)")
	to := fs.String("to", "", "only messages on or before this ISO-8601 date (the whole day) or time")
	// Flags may follow the query.
	text, help, err := parseWords(fs, args)
	if help || err != nil {
		return err
	}
	if text == "" {
		return usageError{"search needs a query, e.g. tidings search \"dinner on friday\""}
	}
	if *limit < 1 || *limit > service.MaxSearchLimit {
		return usageError{fmt.Sprintf("--limit %d: want 1 to %d", *limit, service.MaxSearchLimit)}
	}
	// --days reads as search_messages' days does: absent means any time,
	// and 0 is refused, not taken for "absent".
	var nDays float64
	if flagSet(fs, "days") {
		d, err := coerce.Days(*days, coerce.DaysSpec{Name: "--days", Max: service.MaxSearchDays, Required: true})
		if err != nil {
			return usageError{err.Error()}
		}
		nDays = d
	}
	switch index.Mode(*mode) {
	case index.ModeHybrid, index.ModeFulltext, index.ModeSubstring, index.ModeSemantic:
	default:
		return usageError{fmt.Sprintf("--mode %q: want hybrid, fulltext, substring or semantic", *mode)}
	}
	// The query layer answers, as it does for review, dossier, the MCP
	// tools and the bridge: read policy (people, not only threads),
	// redaction and sanitisation apply to what a terminal — or an agent
	// running this command — is shown.
	cfg, svc, done, err := openQuery(ctx, m, loader)
	if err != nil {
		return err
	}
	defer done()
	res, err := svc.Search(ctx, service.SearchParams{Query: text, Mode: *mode, ConversationID: *conv, Contact: *contact,
		Days: nDays, DateFrom: *from, DateTo: *to, FromMe: fromMe.v, Limit: *limit, Cursor: *cursor, LiteralDates: *literal})
	if err != nil {
		return cliDateErr(err)
	}
	if *jsonOut {
		return printJSON(m.Stdout, res)
	}
	printResult(m.Stdout, res, isTerminalWriter(m.Stdout), *explain, cfg.Location())
	return nil
}

// cliDateErr names the CLI's flags in the service's date errors, which
// name search_messages' parameters (date_from, date_to).
func cliDateErr(err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "date_from") && !strings.Contains(msg, "date_to") {
		return err
	}
	return usageError{strings.NewReplacer("date_from", "--from", "date_to", "--to").Replace(msg)}
}

// printResult writes a result for a person: one block per hit (its body
// on one line, so no body can pass for another row), then what was
// searched and whether the scan was complete.
func printResult(w io.Writer, res service.SearchResult, color, explain bool, loc *time.Location) {
	for _, h := range res.Hits {
		fmt.Fprintf(w, "%s  %s · %s\n", h.Time.In(loc).Format("2006-01-02 15:04"), h.Sender, h.Conversation.Label)
		body := h.Snippet
		if body == "" {
			body = h.Text
		}
		body = oneLine(body, 400)
		if color {
			body = highlight(body)
		}
		fmt.Fprintf(w, "    %s\n", body)
		if explain {
			fmt.Fprintf(w, "    [score %.4f]\n", h.Score)
		}
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no messages found")
	}
	fmt.Fprintf(w, "\n%d result(s), mode %s", len(res.Hits), res.Mode)
	if res.ScanComplete {
		fmt.Fprint(w, ", scan complete")
	} else {
		fmt.Fprint(w, ", scan NOT complete (more matches may exist)")
	}
	fmt.Fprintln(w)
	if d := res.DateFilter; d != nil {
		fmt.Fprintf(w, "dates: %q → %s\n", d.Text, fmtRange(d.Since, d.Until, loc))
	}
	for _, c := range []*index.SignalCoverage{res.Coverage.Fulltext, res.Coverage.Semantic, res.Coverage.Substring} {
		if c != nil && c.Note != "" {
			fmt.Fprintf(w, "note: %s\n", oneLine(c.Note, 300))
		}
		if c != nil && len(c.Capped) > 0 {
			fmt.Fprintf(w, "note: only the newest matches of %s were read\n", oneLine(strings.Join(c.Capped, ", "), 300))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if res.NextCursor != "" {
		fmt.Fprintf(w, "more: --cursor %s\n", res.NextCursor)
	}
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// highlight turns snippet markers into terminal bold.
func highlight(s string) string {
	var b strings.Builder
	open := true
	for {
		i := strings.Index(s, index.SnippetOpen)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if open {
			b.WriteString("\x1b[1m")
		} else {
			b.WriteString("\x1b[0m")
		}
		open = !open
		s = s[i+len(index.SnippetOpen):]
	}
}

// fmtRange shows a date filter's days in loc, the configured time zone.
func fmtRange(since, until time.Time, loc *time.Location) string {
	switch {
	case !since.IsZero() && !until.IsZero():
		return since.In(loc).Format("2006-01-02") + " to " + until.Add(-time.Millisecond).In(loc).Format("2006-01-02")
	case !since.IsZero():
		return "since " + since.In(loc).Format("2006-01-02")
	case !until.IsZero():
		return "before " + until.In(loc).Format("2006-01-02")
	}
	return "any time"
}
