package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Hint is an explicit tool annotation value. Its zero value is HintUnset,
// which Validate rejects: go-sdk's ReadOnlyHint and IdempotentHint are plain
// bools, so an omitted hint would silently read as false. Making every tool
// spell out Yes or No is how the inventory guard can tell "forgot" from
// "false".
type Hint uint8

// Hint values.
const (
	HintUnset Hint = iota
	No
	Yes
)

func (h Hint) bool() bool { return h == Yes }

func (h Hint) String() string {
	switch h {
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "unset"
}

// Toolset groups tools that a user enables or disables together (config
// `toolsets`, env TIDINGS_TOOLSETS).
type Toolset string

// The toolsets. A new toolset is added here and documented in
// docs/architecture.md.
const (
	ToolsetStatus      Toolset = "status"      // get_status
	ToolsetMessages    Toolset = "messages"    // list/read/search conversations
	ToolsetTriage      Toolset = "triage"      // review_messages, get_response_stats
	ToolsetContacts    Toolset = "contacts"    // lookup_contacts, get_contact_dossier
	ToolsetAttachments Toolset = "attachments" // get_attachment, save_attachment
	ToolsetSend        Toolset = "send"        // preview_message, send_message

	// The toolsets of the other services of seed 002 (docs/architecture.md,
	// "How to add a service"). Only system is on by default; mail, calendar,
	// reminders and addressbook join the defaults when config.toml configures
	// accounts for them; the rest register only when named in `toolsets`.
	ToolsetSystem      Toolset = "system"      // permissions_check
	ToolsetWeb         Toolset = "web"         // web_fetch
	ToolsetWeather     Toolset = "weather"     // weather_*
	ToolsetMaps        Toolset = "maps"        // maps_*
	ToolsetLocation    Toolset = "location"    // location_*
	ToolsetCapture     Toolset = "capture"     // capture_*
	ToolsetShortcuts   Toolset = "shortcuts"   // shortcuts_*
	ToolsetUtilities   Toolset = "utilities"   // utilities_*
	ToolsetMail        Toolset = "mail"        // mail_*
	ToolsetCalendar    Toolset = "calendar"    // calendars_*
	ToolsetReminders   Toolset = "reminders"   // reminders_*
	ToolsetAddressBook Toolset = "addressbook" // contacts_*
)

// Toolsets lists every toolset in display order.
var Toolsets = []Toolset{
	ToolsetStatus, ToolsetMessages, ToolsetTriage, ToolsetContacts, ToolsetAttachments, ToolsetSend,
	ToolsetSystem, ToolsetWeb, ToolsetWeather, ToolsetMaps, ToolsetLocation, ToolsetCapture,
	ToolsetShortcuts, ToolsetUtilities, ToolsetMail, ToolsetCalendar, ToolsetReminders, ToolsetAddressBook,
}

// Tool is one inventory entry: a static definition, its toolset, explicit
// annotations, the properties filters look at, and a factory that builds the
// typed handler from dependencies. Create one with Define.
type Tool struct {
	Name        string
	Title       string
	Description string
	Toolset     Toolset

	// The four MCP annotations, each stated explicitly.
	ReadOnly    Hint
	Destructive Hint
	Idempotent  Hint
	OpenWorld   Hint

	// SendGate marks a tool quarantined behind ENABLE_MCP_SEND_MESSAGE=true.
	SendGate bool
	// WritesFiles marks a tool that writes files; it is registered only
	// when the profile names folders it may write to (file_dirs).
	WritesFiles bool
	// Instructions, if set, is appended to the server instructions when the
	// tool is registered (one or two sentences on when to use it).
	Instructions string
	// InputSchema and OutputSchema override the schemas go-sdk infers from
	// the handler's In and Out types (for example to accept numbers given
	// as strings). Leave nil to infer.
	InputSchema  any
	OutputSchema any

	register func(s *mcp.Server, def *mcp.Tool, d *Deps)

	// Set by New from the Service a tool came from (empty for the
	// messaging tools of Inventory, which are on by default).
	service     string
	unavailable string
	optIn       bool
}

// Define binds a tool definition to a typed handler factory. The factory
// runs once per server, after filtering, with the server's dependencies; the
// handler it returns is registered with mcp.AddTool, so go-sdk validates
// every call's arguments against the schema inferred from In before the
// handler runs, and fills structuredContent (plus a JSON text block) from
// Out.
//
// When t.InputSchema is nil, Define infers it from In the way go-sdk does,
// plus coerce.TypeSchemas, so coerce.Number fields accept integers, reals
// and numeric strings (the handler then reads them with coerce.Int etc.).
func Define[In, Out any](t Tool, factory func(d *Deps) mcp.ToolHandlerFor[In, Out]) Tool {
	if t.InputSchema == nil {
		rt := reflect.TypeFor[In]()
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		schema, err := jsonschema.ForType(rt, &jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
		if err != nil {
			panic(fmt.Sprintf("tool %q: input schema: %v", t.Name, err))
		}
		t.InputSchema = schema
	}
	t.register = func(s *mcp.Server, def *mcp.Tool, d *Deps) {
		h := factory(d)
		mcp.AddTool(s, def, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			res, out, err := h(ctx, req, in)
			if _, wire := err.(*jsonrpc.Error); err != nil && !wire { // go-sdk passes a wire error on by type
				err = quotedError{err}
			}
			return res, out, err
		})
	}
	return t
}

// quotedError is the tool results' catch-all for errors that quote input
// (a file's content, a path read from a file): the isError text is escaped
// and bounded by sanitize.Message (docs/security.md, "Errors that quote
// input"); errors.Is and errors.As see the original.
type quotedError struct{ err error }

func (e quotedError) Error() string { return sanitize.Message(e.err.Error()) }
func (e quotedError) Unwrap() error { return e.err }

// Def returns the go-sdk tool definition with the annotations filled from
// the explicit hints.
func (t Tool) Def() *mcp.Tool {
	destructive, openWorld := t.Destructive.bool(), t.OpenWorld.bool()
	return &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.ReadOnly.bool(),
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent.bool(),
			OpenWorldHint:   &openWorld,
		},
		OutputSchema: t.OutputSchema,
	}
}

// IsWrite reports whether the tool changes anything (not read-only).
func (t Tool) IsWrite() bool { return t.ReadOnly != Yes }

var toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Validate checks an inventory entry: a valid name, a description, a known
// toolset, a handler, and all four annotations stated explicitly and
// consistently. Every tool in Inventory must pass; TestInventoryGuard runs it.
func Validate(t Tool) error {
	var errs []error
	if !toolNameRE.MatchString(t.Name) {
		errs = append(errs, fmt.Errorf("name %q must match %s", t.Name, toolNameRE))
	}
	if strings.TrimSpace(t.Description) == "" {
		errs = append(errs, errors.New("missing description"))
	}
	if t.Title == "" {
		errs = append(errs, errors.New("missing title"))
	}
	if !slices.Contains(Toolsets, t.Toolset) {
		errs = append(errs, fmt.Errorf("unknown toolset %q", t.Toolset))
	}
	for _, h := range []struct {
		name string
		v    Hint
	}{{"readOnlyHint", t.ReadOnly}, {"destructiveHint", t.Destructive}, {"idempotentHint", t.Idempotent}, {"openWorldHint", t.OpenWorld}} {
		if h.v != Yes && h.v != No {
			errs = append(errs, fmt.Errorf("%s not set explicitly (use Yes or No)", h.name))
		}
	}
	if t.ReadOnly == Yes && t.Destructive == Yes {
		errs = append(errs, errors.New("a read-only tool cannot be destructive"))
	}
	if (t.SendGate || t.WritesFiles) && t.ReadOnly == Yes {
		errs = append(errs, errors.New("send and file-writing tools must not claim readOnlyHint"))
	}
	if t.register == nil {
		errs = append(errs, errors.New("no handler: build the entry with Define"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return nil
}
