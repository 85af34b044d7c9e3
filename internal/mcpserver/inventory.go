package mcpserver

import (
	"context"
	"encoding/json"
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

// Endpoint is a kind of configured endpoint that receives message text.
// Any such endpoint is external, loopback included: what listens there is
// not Tidings, and the text leaves Tidings' guard rails.
type Endpoint string

// The endpoint kinds.
const (
	EndpointEmbedder       Endpoint = "embedder"        // [embedder] name = "http"
	EndpointDossierSummary Endpoint = "dossier_summary" // dossier_summary_url
)

// Endpoints lists every endpoint kind.
var Endpoints = []Endpoint{EndpointEmbedder, EndpointDossierSummary}

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

	// OpenWorldVia names the configured endpoints through which a tool
	// that is closed world by itself (OpenWorld: No) sends text beyond
	// this process: search_messages embeds the query through an http
	// embedder. Its openWorldHint is true exactly when one of them is
	// configured and allow_external allows it (Filters.Reaches); with
	// allow_external = false the tool stays and the endpoint is not used
	// (docs/security.md, "Open world").
	OpenWorldVia []Endpoint

	// SendGate marks a tool quarantined behind ENABLE_MCP_SEND_MESSAGE=true.
	SendGate bool
	// WritesFiles marks a tool that writes files; it is registered only
	// when the profile names folders it may write to (file_dirs).
	WritesFiles bool
	// ReadsFiles marks a tool that reads the person's files for a caller
	// (utilities_play_sound); like WritesFiles it is registered only when
	// the profile names the folders it may read from (file_dirs).
	ReadsFiles bool
	// Bridged marks a service tool that reads what the bridge helper owns
	// (a service's sync, its secrets, the macOS stores). In `serve
	// --bridge` (Deps.BridgeCall set) the server registers the same
	// definition with a forwarding handler that sends a protocol 1.3
	// action of the tool's name with the call's arguments, and the helper
	// runs this very handler (NewBridgedServer; docs/bridge.md, "Service
	// tools through the bridge"). Tools that only reach the network
	// (web, weather, maps) are not bridged: they run in serve.
	Bridged bool
	// Instructions, if set, is appended to the server instructions when the
	// tool is registered (one or two sentences on when to use it).
	Instructions string
	// InputSchema and OutputSchema override the schemas go-sdk infers from
	// the handler's In and Out types (for example to accept numbers given
	// as strings). Leave nil to infer.
	InputSchema  any
	OutputSchema any
	// Unavailable, set by a service on one of its tools, keeps just that
	// tool out with this one-sentence reason while the service's other
	// tools work (maps_open without an opener on PATH); the service's own
	// Service.Unavailable wins when both are set.
	Unavailable string

	register func(s *mcp.Server, def *mcp.Tool, d *Deps)
	// forward registers def with a handler that asks d.BridgeCall instead
	// of running the tool here (Bridged tools in `serve --bridge`). Built
	// by Define with the same In and Out types, so go-sdk infers the same
	// wire definition and validates the arguments the same way.
	forward func(s *mcp.Server, def *mcp.Tool, d *Deps)

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
	if t.OutputSchema == nil {
		rt := reflect.TypeFor[Out]()
		if rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		schema, err := jsonschema.ForType(rt, &jsonschema.ForOptions{})
		if err != nil {
			panic(fmt.Sprintf("tool %q: output schema: %v", t.Name, err))
		}
		t.OutputSchema = outline(schema)
	}
	t.register = func(s *mcp.Server, def *mcp.Tool, d *Deps) {
		h := factory(d)
		mcp.AddTool(s, def, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			res, out, err := h(ctx, req, in)
			if _, wire := err.(*jsonrpc.Error); err != nil && !wire { // go-sdk passes a wire error on by type
				err = quotedError{err}
			}
			if err == nil && (res == nil || (res.Content == nil && res.InputRequests == nil)) {
				if text, ok := textContent(out); ok {
					if res == nil {
						res = &mcp.CallToolResult{}
					}
					res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
				}
			}
			return res, out, err
		})
	}
	t.forward = func(s *mcp.Server, def *mcp.Tool, d *Deps) {
		mcp.AddTool(s, def, func(ctx context.Context, req *mcp.CallToolRequest, _ In) (*mcp.CallToolResult, Out, error) {
			return forwardCall[Out](ctx, d, def.Name, req.Params.Arguments)
		})
	}
	return t
}

// outline is the output schema a tool lists: the top level of Out's
// schema — every field, its JSON type, which are required, no others —
// without the nested fields or descriptions. Every conversation pays for
// tools/list before its first question, and the full schemas were most of
// it (the dossier's alone 11.9 KB; docs/tools.md, "Sizes"); the model
// reads the nested fields in the answer itself, and docs/tools.md
// documents them. The outline is exact as far as it goes: go-sdk still
// validates every answer against it.
func outline(s *jsonschema.Schema) *jsonschema.Schema {
	typeOnly := func(p *jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Type: p.Type, Types: slices.Clone(p.Types), Enum: slices.Clone(p.Enum)}
	}
	out := &jsonschema.Schema{Type: s.Type, Types: slices.Clone(s.Types), Required: slices.Clone(s.Required),
		AdditionalProperties: s.AdditionalProperties}
	if len(s.Properties) > 0 {
		out.Properties = map[string]*jsonschema.Schema{}
		for name, p := range s.Properties {
			q := typeOnly(p)
			if p.Items != nil {
				q.Items = typeOnly(p.Items)
			}
			out.Properties[name] = q
		}
	}
	return out
}

// textContent is a result's text content block: Out as JSON written
// without HTML escaping. go-sdk would fill the block with encoding/json's
// default output, which writes every `<`, `>` and `&` as \u003c, \u003e,
// \u0026: the model would read `\u003cuntrusted_external_content\u003e`
// where the server's instructions show the literal tag, and pay six bytes
// for one. What keeps third-party text inside its element is the
// wrapper's own escaping of `&<>` (docs/security.md, "Untrusted-content
// wrapping"), never the JSON encoder's. ok is false for a nil pointer
// (go-sdk then writes the zero value itself).
func textContent(out any) (string, bool) {
	if v := reflect.ValueOf(out); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return "", false
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", false // go-sdk reports the marshalling error itself
	}
	return strings.TrimSuffix(b.String(), "\n"), true
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

// DefFor returns Def with the openWorldHint resolved for the filters'
// configuration: true for an open-world tool, and for a tool whose
// OpenWorldVia endpoint f reaches.
func (t Tool) DefFor(f Filters) *mcp.Tool {
	def := t.Def()
	if slices.ContainsFunc(t.OpenWorldVia, f.Reaches) {
		yes := true
		def.Annotations.OpenWorldHint = &yes
	}
	return def
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
	if len(t.OpenWorldVia) > 0 && t.OpenWorld != No {
		errs = append(errs, errors.New("OpenWorldVia is for tools that are closed world by themselves: state OpenWorld: No"))
	}
	for _, e := range t.OpenWorldVia {
		if !slices.Contains(Endpoints, e) {
			errs = append(errs, fmt.Errorf("OpenWorldVia names unknown endpoint %q", e))
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
