package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/dossier"
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
}

// ContactDossierOutput is get_contact_dossier's result.
type ContactDossierOutput struct {
	service.DossierReport
	Page Page `json:"page"`
}

var getContactDossier = Define(Tool{
	Name:         "get_contact_dossier",
	Title:        "Contact dossier",
	Description:  "A living dossier of one person from the user's one-to-one conversations: background, open commitments (promised, asked, owed or planned, with dates) and recent history. detail \"full\" adds past and settled commitments, quarterly reply times, topics and monthly volume. Every claim cites message ids. Extractive: nothing is invented.",
	Toolset:      ToolsetContacts,
	ReadOnly:     Yes,
	Destructive:  No,
	Idempotent:   Yes,
	OpenWorld:    No,
	Instructions: "For what is going on with a person (open promises, money owed, plans, when you last really talked), call get_contact_dossier once and cite its message ids; read a cited conversation only if the user asks for details.",
}, func(d *Deps) mcp.ToolHandlerFor[ContactDossierInput, ContactDossierOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ContactDossierInput) (*mcp.CallToolResult, ContactDossierOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		r, err := svc.Dossier(ctx, service.DossierParams{ContactID: in.ContactID})
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		wrapDossier(&r)
		page, err := fitDossier(&r)
		if err != nil {
			return nil, ContactDossierOutput{}, err
		}
		return nil, ContactDossierOutput{DossierReport: r, Page: page}, nil
	}
})

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

// fitDossier trims a dossier to MaxResultBytes: resolved commitments,
// then the oldest months of volume, then past-due commitments.
func fitDossier(r *service.DossierReport) (Page, error) {
	page := Page{}
	n, err := jsonSize(r)
	if err != nil {
		return page, err
	}
	cut := 0
	for n > MaxResultBytes-512 {
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
	if cut > 0 {
		page.Truncated = true
		page.Note = fmt.Sprintf("%d older entries (resolved or past commitments, early months) were left out to stay under %d KB", cut, MaxResultBytes>>10)
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
