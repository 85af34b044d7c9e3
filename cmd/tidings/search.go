package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
)

func init() {
	register(command{
		name:    "search",
		summary: "search the index: tidings search QUERY [--mode hybrid|fulltext|substring|semantic] [--json]",
		run:     runSearch,
	})
}

var searchFlags = []string{"home", "region", "log-level", "embedder", "embedder-url", "embedder-model", "embedder-api-key-env"}

const searchUsage = `Usage: tidings search QUERY [flags]

Searches the index built by 'tidings index'. QUERY can be a natural
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
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	limit := fs.Int("limit", 10, "results per page (1-100)")
	conv := fs.String("conversation", "", "restrict to a conversation (id or chat identifier)")
	contact := fs.String("contact", "", "restrict to conversations with a person (name, phone, email)")
	days := fs.Int("days", 0, "restrict to the last N days")
	var fromMe boolFlag
	fs.Var(&fromMe, "from-me", "only messages I sent (true) or received (false)")
	explain := fs.Bool("explain", false, "show each signal's rank and score")
	cursor := fs.String("cursor", "", "continue from a previous result's next_cursor")
	literal := fs.Bool("literal-dates", false, "treat words like 'yesterday' as words, not date filters")
	// Flags may follow the query.
	text, help, err := parseWords(fs, args)
	if help || err != nil {
		return err
	}
	if text == "" {
		return usageError{"search needs a query, e.g. tidings search \"dinner on friday\""}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	logger := newLogger(m.Stderr, cfg.LogLevel)
	ix, err := openIndex(ctx, cfg, m.Getenv, logger, true)
	if err != nil {
		return fmt.Errorf("%w (run 'tidings index' first)", err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, index.Query{Text: text, Mode: index.Mode(*mode), ConversationID: *conv, Contact: *contact,
		Days: *days, FromMe: fromMe.v, Limit: *limit, Cursor: *cursor, Explain: *explain, LiteralDates: *literal})
	if err != nil {
		if errors.Is(err, index.ErrBadQuery) || errors.Is(err, index.ErrBadCursor) {
			return usageError{err.Error()}
		}
		return err
	}
	if *jsonOut {
		return printJSON(m.Stdout, res)
	}
	printResult(m.Stdout, res, isTerminalWriter(m.Stdout))
	return nil
}

// printResult writes a result for a person: one block per hit, then what
// was searched and whether the scan was complete.
func printResult(w io.Writer, res *index.Result, color bool) {
	for _, h := range res.Hits {
		who := h.SenderName
		if who == "" {
			who = h.Sender
		}
		if h.FromMe {
			who = "me"
		}
		where := h.Conversation.Label
		fmt.Fprintf(w, "%s  %s · %s\n", h.Time.Local().Format("2006-01-02 15:04"), who, where)
		snip := h.Snippet
		if color {
			snip = highlight(snip)
		}
		fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(snip, "\n", "\n    "))
		if e := h.Explain; e != nil {
			var parts []string
			if e.Fulltext != nil {
				parts = append(parts, fmt.Sprintf("fulltext #%d (%.3f)", e.Fulltext.Rank, e.Fulltext.Score))
			}
			if e.Semantic != nil {
				parts = append(parts, fmt.Sprintf("semantic #%d (%.3f)", e.Semantic.Rank, e.Semantic.Score))
			}
			if e.Fused > 0 {
				parts = append(parts, fmt.Sprintf("fused %.4f", e.Fused))
			}
			fmt.Fprintf(w, "    [%s]\n", strings.Join(parts, ", "))
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
	if in := res.Interpretation; in != nil {
		var words []string
		for _, t := range in.Terms {
			words = append(words, t.Word)
		}
		if len(words) > 0 {
			fmt.Fprintf(w, "searched for: %s\n", strings.Join(words, ", "))
		}
		if in.DateText != "" {
			fmt.Fprintf(w, "dates: %q → %s", in.DateText, fmtRange(in.Since, in.Until))
			fmt.Fprintln(w)
		}
	}
	for _, c := range []*index.SignalCoverage{res.Coverage.Fulltext, res.Coverage.Semantic, res.Coverage.Substring} {
		if c != nil && c.Note != "" {
			fmt.Fprintf(w, "note: %s\n", c.Note)
		}
		if c != nil && len(c.Capped) > 0 {
			fmt.Fprintf(w, "note: only the newest matches of %s were read\n", strings.Join(c.Capped, ", "))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if res.NextCursor != "" {
		fmt.Fprintf(w, "more: --cursor %s\n", res.NextCursor)
	}
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

func fmtRange(since, until time.Time) string {
	switch {
	case !since.IsZero() && !until.IsZero():
		return since.Local().Format("2006-01-02") + " to " + until.Add(-time.Millisecond).Local().Format("2006-01-02")
	case !since.IsZero():
		return "since " + since.Local().Format("2006-01-02")
	case !until.IsZero():
		return "before " + until.Local().Format("2006-01-02")
	}
	return "any time"
}
