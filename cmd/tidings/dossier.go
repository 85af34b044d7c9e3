package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/service"
)

func init() {
	register(command{
		name:    "dossier",
		summary: "what is going on with a person: commitments, history, topics (tidings dossier CONTACT [--json])",
		run:     runDossier,
	})
}

const dossierUsage = `Usage: tidings dossier CONTACT [--json] [--rebuild]

Shows the living dossier of one person, as get_contact_dossier does for an
assistant: background, open and settled commitments (promises, requests,
money, plans), and the relationship over time. CONTACT is a name, a phone
number in any format, an e-mail address or a contact id. Every line cites
the ids of the messages it rests on. The dossier is kept in the index and
updated with new messages.

Flags:
`

func runDossier(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "dossier", dossierUsage)
	loader := config.Bind(fs, queryFlags...)
	jsonOut := fs.Bool("json", false, "print the dossier as JSON (the get_contact_dossier fields, bodies not wrapped)")
	rebuild := fs.Bool("rebuild", false, "build the dossier again from all messages")
	// The contact may come before or after the flags.
	contact, help, err := parseWords(fs, args)
	if help || err != nil {
		return err
	}
	if contact == "" {
		return usageError{"dossier needs a contact, e.g. tidings dossier \"Sam Rivera\" or tidings dossier +14155550134"}
	}
	_, svc, done, err := openQuery(ctx, m, loader)
	if err != nil {
		return err
	}
	defer done()
	r, err := svc.Dossier(ctx, service.DossierParams{ContactID: contact, Rebuild: *rebuild})
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(m.Stdout, r)
	}
	printDossier(m.Stdout, r)
	return nil
}

// printDossier writes a dossier for a person to read.
func printDossier(w io.Writer, r service.DossierReport) {
	s := r.Subject
	name := s.Name
	if name == "" && len(s.Handles) > 0 {
		name = s.Handles[0]
	}
	fmt.Fprintf(w, "%s", name)
	if s.Organization != "" {
		fmt.Fprintf(w, " (%s)", s.Organization)
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(s.Handles, ", "))
	bg := r.Background
	fmt.Fprintf(w, "\n%d messages: %d sent, %d received", r.Messages, bg.Sent, bg.Received)
	if bg.FirstContact != nil && bg.LastContact != nil {
		fmt.Fprintf(w, "; first %s, last %s", bg.FirstContact.Time.Format("Jan 2, 2006"), bg.LastContact.Time.Format("Jan 2, 2006"))
	}
	fmt.Fprintln(w)
	list := func(title string, cs []dossier.Commitment) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, c := range cs {
			line := fmt.Sprintf("  - [%s, %s] %s", c.Kind, c.Owner, oneLine(c.Text, 110))
			if c.Due != nil {
				line += fmt.Sprintf(" (due %s)", c.Due.Start.Format("Mon Jan 2"))
			}
			if c.Resolution != "" {
				line += " → " + c.Resolution
			}
			fmt.Fprintf(w, "%s\n      cites %s\n", line, strings.Join(append(append([]string{}, c.Sources...), c.ResolvedBy...), ", "))
		}
	}
	list("ACTIVE COMMITMENTS", r.Active)
	list("PAST DUE", r.Past)
	list("RECENTLY SETTLED", r.Resolved)
	h := r.History
	if len(h.Quarters) > 0 {
		fmt.Fprintf(w, "\nACTIVITY\n")
		for _, q := range h.Quarters {
			reply := "no replies measured"
			if q.MyReplies.Samples > 0 {
				reply = "you reply in " + q.MyReplies.MedianHuman + " (median)"
			}
			fmt.Fprintf(w, "  %s  %4d messages on %2d days; %s\n", q.Quarter, q.Messages, q.ActiveDays, reply)
		}
		fmt.Fprintf(w, "  trend: %s (%s)\n", h.ResponseTrend.Direction, h.ResponseTrend.Explanation)
	}
	if len(h.Topics) > 0 {
		var ts []string
		for _, t := range h.Topics {
			ts = append(ts, fmt.Sprintf("%s (%d)", t.Term, t.Count))
		}
		fmt.Fprintf(w, "\nRECURRING TOPICS: %s\n", strings.Join(ts, ", "))
	}
	if ex := h.LastSignificant; ex != nil {
		fmt.Fprintf(w, "\nLAST SIGNIFICANT EXCHANGE (%s, %s): %s\n  cites %s\n", ex.Start.Format(time.DateOnly), strings.Join(ex.Why, ", "),
			oneLine(ex.Excerpt, 160), ex.ExcerptID)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "\nnote: %s\n", r.Note)
	}
}
