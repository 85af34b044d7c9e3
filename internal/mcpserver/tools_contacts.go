package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/service"
)

// ---- lookup_contacts ----

// LookupContactsInput is lookup_contacts' argument object.
type LookupContactsInput struct {
	Name string `json:"name" jsonschema:"part of a name (case and accents ignored)"`
}

// LookupContactsOutput is lookup_contacts' result (the bridge's
// contacts_lookup response, docs/bridge.md and docs/tools.md).
type LookupContactsOutput struct {
	service.ContactLookup
}

var lookupContacts = Define(Tool{
	Name:         "lookup_contacts",
	Title:        "Look up contacts",
	Description:  "Find people in the user's contacts by name (up to 25, best first): name, phone_last10 or email, and a contact_id for get_contact_dossier. ambiguous is true when several people fit: ask the user. People the read policy hides are never listed.",
	Toolset:      ToolsetContacts,
	ReadOnly:     Yes,
	Destructive:  No,
	Idempotent:   Yes,
	OpenWorld:    No,
	Instructions: "Use lookup_contacts to turn a name into a number or address before sending, or when a name is ambiguous.",
}, func(d *Deps) mcp.ToolHandlerFor[LookupContactsInput, LookupContactsOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in LookupContactsInput) (*mcp.CallToolResult, LookupContactsOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, LookupContactsOutput{}, err
		}
		res, err := svc.LookupContacts(ctx, service.LookupParams{Name: in.Name})
		if err != nil {
			return nil, LookupContactsOutput{}, err
		}
		return nil, LookupContactsOutput{res}, nil
	}
})

// ---- get_contact_dossier ----

// ContactDossierInput is get_contact_dossier's argument object.
type ContactDossierInput struct {
	ContactID string `json:"contact_id" jsonschema:"a contact_id from lookup_contacts, a phone number or an e-mail address (a unique name also works)"`
	Detail    string `json:"detail,omitempty" jsonschema:"compact (default) or full"`
}

// The two sizes of a dossier (docs/dossier.md, "Compact and full"): the
// compact one is what a model needs to answer "what is going on with
// them" — background, open commitments, the last significant exchange —
// within CompactDossierBytes; "full" adds the long sections (past-due and
// settled commitments, quarters, topics, monthly volume) within
// MaxResultBytes.
const (
	DetailCompact       = "compact"
	DetailFull          = "full"
	CompactDossierBytes = 6 << 10
)

// ContactDossierOutput is get_contact_dossier's result: the service's
// report, with whether it was cut said once, in page (the report's own
// truncated flag and note move there).
type ContactDossierOutput struct {
	ContactID  string               `json:"contact_id"`
	Detail     string               `json:"detail"`
	Stored     bool                 `json:"stored"`
	Rebuilt    bool                 `json:"rebuilt"`
	Subject    dossier.Subject      `json:"subject"`
	AsOf       time.Time            `json:"as_of"`
	UpTo       dossier.Cursor       `json:"up_to"`
	Messages   int                  `json:"messages"`
	Background dossier.Background   `json:"background"`
	Active     []dossier.Commitment `json:"active_commitments"`
	// Past and Resolved are left out of a compact dossier (Omitted says
	// how many there are).
	Past        []dossier.Commitment `json:"past_commitments,omitempty"`
	Resolved    []dossier.Commitment `json:"resolved_commitments,omitempty"`
	History     dossier.History      `json:"relationship_history"`
	Generated   bool                 `json:"generated"`
	Summary     *dossier.Summary     `json:"summary,omitempty"`
	SummaryNote string               `json:"summary_note,omitempty"`
	Omitted     string               `json:"omitted,omitempty" jsonschema:"what a compact dossier leaves out; detail full adds it"`
	Page        Page                 `json:"page"`
}

var getContactDossier = Define(Tool{
	Name:        "get_contact_dossier",
	Title:       "Contact dossier",
	Description: "A living dossier of one person from the user's one-to-one conversations: background, open commitments (promised, asked, owed or planned, with dates) and recent history. detail \"full\" adds past and settled commitments, quarterly reply times, topics and monthly volume. Every claim cites message ids. Extractive: nothing is invented.",
	Toolset:     ToolsetContacts,
	ReadOnly:    Yes,
	Destructive: No,
	Idempotent:  Yes,
	OpenWorld:   No,
	// The generated summary is written by the configured summary
	// endpoint: open world when that is configured and allowed.
	OpenWorldVia: []Endpoint{EndpointDossierSummary},
	Instructions: "For what is going on with a person (open promises, money owed, plans, when you last really talked), call get_contact_dossier once and cite its message ids; read a cited conversation only if the user asks for details.",
}, func(d *Deps) mcp.ToolHandlerFor[ContactDossierInput, ContactDossierOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ContactDossierInput) (*mcp.CallToolResult, ContactDossierOutput, error) {
		detail := strings.ToLower(strings.TrimSpace(in.Detail))
		switch detail {
		case "":
			detail = DetailCompact
		case DetailCompact, DetailFull:
		default:
			return nil, ContactDossierOutput{}, fmt.Errorf("detail must be %q (the default) or %q, not %s", DetailCompact, DetailFull, sanitize.Quote(in.Detail, 40))
		}
		svc, err := messages(d)
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		r, err := svc.Dossier(ctx, service.DossierParams{ContactID: in.ContactID})
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		wrapDossier(&r)
		out := ContactDossierOutput{ContactID: r.ContactID, Detail: detail, Stored: r.Stored, Rebuilt: r.Rebuilt,
			Subject: r.Subject, AsOf: r.AsOf, UpTo: r.UpTo, Messages: r.Messages, Background: r.Background,
			Active: r.Active, Past: r.Past, Resolved: r.Resolved, History: r.History, Generated: r.Generated,
			Summary: r.Summary, SummaryNote: r.SummaryNote}
		if out.Active == nil {
			out.Active = []dossier.Commitment{}
		}
		budget := MaxResultBytes - 512
		if detail == DetailCompact {
			budget = CompactDossierBytes
			out.Omitted = compactDossier(&out)
		}
		page, err := fitDossier(&out, budget)
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		if r.Truncated {
			page.Truncated = true
			page.Note = joinSentences(r.Note, page.Note)
		}
		out.Page = page
		return nil, out, nil
	}
})

// compactDossier leaves the long sections out of a dossier and says what
// it left out.
func compactDossier(out *ContactDossierOutput) string {
	var left []string
	if n := len(out.Past); n > 0 {
		left = append(left, fmt.Sprintf("%d past-due or stale commitments", n))
	}
	if n := len(out.Resolved); n > 0 {
		left = append(left, fmt.Sprintf("%d settled commitments", n))
	}
	if len(out.History.Quarters) > 0 {
		left = append(left, "activity and reply times by quarter")
	}
	if len(out.History.Topics) > 0 {
		left = append(left, "recurring topics")
	}
	if len(out.Background.Volume) > 0 {
		left = append(left, "volume by month")
	}
	out.Past, out.Resolved = nil, nil
	out.History.Quarters, out.History.Topics = nil, nil
	out.Background.Volume = nil
	if len(left) == 0 {
		return ""
	}
	return strings.Join(left, ", ")
}

func wrapDossier(r *service.DossierReport) {
	for _, list := range [][]dossier.Commitment{r.Active, r.Past, r.Resolved} {
		for i := range list {
			list[i].Text = wrapBody(list[i].Text)
			list[i].What = wrapBody(list[i].What)
		}
	}
	for i := range r.History.Topics {
		r.History.Topics[i].Term = wrapBody(r.History.Topics[i].Term)
	}
	if ex := r.History.LastSignificant; ex != nil {
		ex.Excerpt = wrapBody(ex.Excerpt)
	}
	if r.Summary != nil {
		r.Summary.Text = wrapBody(r.Summary.Text)
	}
}

// fitDossier trims a dossier to budget bytes of JSON: settled
// commitments, then the oldest months of volume, then past-due
// commitments, then the oldest open ones (one is always kept).
func fitDossier(r *ContactDossierOutput, budget int) (Page, error) {
	page := Page{}
	n, err := jsonSize(r)
	if err != nil {
		return page, err
	}
	cut := 0
	for n > budget {
		switch {
		case len(r.Resolved) > 0:
			r.Resolved = r.Resolved[:len(r.Resolved)-1]
		case len(r.Background.Volume) > 12:
			r.Background.Volume = r.Background.Volume[1:]
		case len(r.Past) > 0:
			r.Past = r.Past[1:]
		case len(r.Active) > 1:
			r.Active = r.Active[1:]
		default:
			n = 0
			continue
		}
		cut++
		if n, err = jsonSize(r); err != nil {
			return page, err
		}
	}
	page.Returned = len(r.Active) + len(r.Past) + len(r.Resolved)
	if cut > 0 {
		page.Truncated = true
		page.Note = fmt.Sprintf("%s (commitments, early months) left out to stay under %d KB", output.Count(cut, "older item"), budget>>10)
	}
	return page, nil
}

func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("measure result: %w", err)
	}
	return len(b), nil
}
