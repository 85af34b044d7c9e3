// Package conformance is a test-only MCP server that carries the fixtures
// the official conformance suite (@modelcontextprotocol/conformance) calls
// by name — test_simple_text, test://static-text, test_simple_prompt, … —
// on Tidings' own server stack (mcpserver.NewStack and
// mcpserver.NewHTTPHandler). It exists so the suite can score the stack;
// none of it is ever part of the product's tool list (only tests import
// this package).
//
// The fixture names and shapes are dictated by the suite's scenarios; the
// implementation is Tidings' own.
//
//lint:file-ignore SA1019 the suite scores deprecated sampling, roots and logging on purpose.
package conformance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// NewServer returns the fixture server on the shared stack. The caller
// serves it with mcpserver.NewHTTPHandler or mcpserver.ServeStdio.
func NewServer(logger *slog.Logger) *mcp.Server {
	f := &fixtures{key: make([]byte, 32)}
	rand.Read(f.key)
	logging := &mcp.LoggingCapabilities{}
	s := mcpserver.NewStack(mcpserver.StackOptions{
		Name:    "tidings-conformance-fixtures",
		Version: "1.0.0",
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			Logging:     logging,
		},
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Logger:             logger,
	})
	f.server = s
	f.tools()
	f.resources()
	f.prompts()
	return s
}

type fixtures struct {
	server *mcp.Server
	key    []byte // HMAC key for requestState
}

func result(c ...mcp.Content) *mcp.CallToolResult { return &mcp.CallToolResult{Content: c} }

// pngPixel encodes a 1×1 PNG.
func pngPixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 200, G: 30, B: 30, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// wavSilence encodes a short mono 8 kHz 16-bit PCM WAV of silence.
func wavSilence() []byte {
	const samples, rate = 8, 8000
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples*2))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1)) // PCM
	w(uint16(1)) // mono
	w(uint32(rate))
	w(uint32(rate * 2))
	w(uint16(2))
	w(uint16(16))
	b.WriteString("data")
	w(uint32(samples * 2))
	b.Write(make([]byte, samples*2))
	return b.Bytes()
}

type none struct{}

func add[In any](s *mcp.Server, name, desc string, h func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error)) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc}, h)
}

func (f *fixtures) tools() {
	s := f.server
	add(s, "test_simple_text", "Returns one text block.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.TextContent{Text: "Plain text from the Tidings fixture server."}), nil, nil
	})
	add(s, "test_image_content", "Returns one PNG image.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.ImageContent{Data: pngPixel(), MIMEType: "image/png"}), nil, nil
	})
	add(s, "test_audio_content", "Returns one WAV clip.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.AudioContent{Data: wavSilence(), MIMEType: "audio/wav"}), nil, nil
	})
	embedded := func(uri string) *mcp.EmbeddedResource {
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded fixture text."}}
	}
	add(s, "test_embedded_resource", "Returns an embedded text resource.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(embedded("test://embedded-resource")), nil, nil
	})
	add(s, "test_multiple_content_types", "Returns text, an image and a resource.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.TextContent{Text: "Mixed content follows."}, &mcp.ImageContent{Data: pngPixel(), MIMEType: "image/png"}, embedded("test://embedded-in-multiple")), nil, nil
	})
	add(s, "test_tool_with_logging", "Emits three log notifications.", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		for _, m := range []string{"logging fixture started", "logging fixture working", "logging fixture done"} {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m})
			time.Sleep(20 * time.Millisecond)
		}
		return result(&mcp.TextContent{Text: "logged three messages"}), nil, nil
	})
	add(s, "test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for _, p := range []float64{0, 50, 100} {
			if tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100, Message: fmt.Sprintf("%.0f%%", p)})
			}
			time.Sleep(20 * time.Millisecond)
		}
		return result(&mcp.TextContent{Text: fmt.Sprint(tok)}), nil, nil
	})
	add(s, "test_error_handling", "Always fails with a tool error.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("the error fixture failed on purpose")
	})
	type promptIn struct {
		Prompt string `json:"prompt" jsonschema:"text to send to the client's model"`
	}
	add(s, "test_sampling", "Asks the client's model (legacy sampling).", func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}, MaxTokens: 64})
		if err != nil {
			return nil, nil, fmt.Errorf("sampling: %w", err)
		}
		reply := "(no text)"
		if tc, ok := res.Content.(*mcp.TextContent); ok {
			reply = tc.Text
		}
		return result(&mcp.TextContent{Text: "model said: " + reply}), nil, nil
	})
	type messageIn struct {
		Message string `json:"message" jsonschema:"question shown to the user"`
	}
	elicit := func(ctx context.Context, req *mcp.CallToolRequest, msg string, schema any) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: schema})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation: %w", err)
		}
		b, _ := json.Marshal(res.Content)
		return result(&mcp.TextContent{Text: fmt.Sprintf("action=%s content=%s", res.Action, b)}), nil, nil
	}
	add(s, "test_elicitation", "Asks the user for a username (legacy elicitation).", func(ctx context.Context, req *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, in.Message, obj(map[string]any{"username": map[string]any{"type": "string", "description": "user name"}}, "username"))
	})
	add(s, "test_elicitation_sep1034_defaults", "Elicits fields that carry defaults (SEP-1034).", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, "Confirm the defaults", obj(map[string]any{
			"name":     map[string]any{"type": "string", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "default": 30},
			"score":    map[string]any{"type": "number", "default": 95.5},
			"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "default": true},
		}))
	})
	titled := []map[string]any{{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}}
	add(s, "test_elicitation_sep1330_enums", "Elicits every enum form (SEP-1330).", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, "Pick options", obj(map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
			"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti":  map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti":    map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"anyOf": titled}},
		}))
	})
	mcp.AddTool(s, &mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Declares a JSON Schema 2020-12 input schema.",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
			"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
			"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
			"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
			"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
			"additionalProperties":false}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
			return result(&mcp.TextContent{Text: "received " + string(in)}), nil, nil
		})
	type headerIn struct {
		Region string `json:"region,omitempty"`
		Level  int    `json:"level,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_x_mcp_header", Description: "Mirrors region into Mcp-Param-Region (SEP-2243).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in headerIn) (*mcp.CallToolResult, any, error) {
			return result(&mcp.TextContent{Text: "region=" + in.Region}), nil, nil
		})
	add(s, "test_missing_capability", "Needs the sampling client capability; otherwise -32021.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if c := req.ClientCapabilities(); c != nil && c.Sampling != nil {
			return result(&mcp.TextContent{Text: "sampling capability present"}), nil, nil
		}
		data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
		return nil, nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool needs the sampling capability", Data: data}
	})
	add(s, "test_streaming_elicitation", "Answers with a plain result; the stream carries no requests.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.TextContent{Text: "result only"}), nil, nil
	})
	add(s, "test_logging_tool", "Tries to log; dropped unless the request set a log level.", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "logging attempt"})
		return result(&mcp.TextContent{Text: "log attempted"}), nil, nil
	})
	add(s, "test_trigger_tool_change", "Re-registers a tool to emit tools/list_changed.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		add(s, "fixture_transient_tool", "Exists to change the tool list.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return result(), nil, nil
		})
		return result(&mcp.TextContent{Text: "tool list changed"}), nil, nil
	})
	add(s, "test_trigger_prompt_change", "Re-registers a prompt to emit prompts/list_changed.", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		s.AddPrompt(&mcp.Prompt{Name: "fixture_transient_prompt", Description: "Exists to change the prompt list."},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		return result(&mcp.TextContent{Text: "prompt list changed"}), nil, nil
	})
	f.inputRequiredTools()
}

// obj builds an object schema for elicitation.
func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

// --- MRTR (input_required results) ---

func nameSchema(field string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{field: {Type: "string"}}, Required: []string{field}}
}

func askName(msg string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: msg, RequestedSchema: nameSchema("name")}
}

func askModel(prompt string) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}, MaxTokens: 50}
}

// accepted returns the content of an accepted elicitation response.
func accepted(r mcp.InputResponseMap, key string) map[string]any {
	e, ok := r[key].(*mcp.ElicitResult)
	if !ok || e == nil || e.Action != "accept" {
		return nil
	}
	return e.Content
}

func sampled(r mcp.InputResponseMap, key string) (string, bool) {
	res, ok := r[key].(*mcp.CreateMessageWithToolsResult)
	if !ok || res == nil {
		return "", false
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "(no text)", true
}

// seal and open protect requestState with an HMAC, as the spec requires of
// state a client carries between rounds.
func (f *fixtures) seal(payload string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (f *fixtures) open(state string) (string, bool) {
	p, sig, ok := strings.Cut(state, ".")
	if !ok {
		return "", false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return "", false
	}
	m := hmac.New(sha256.New, f.key)
	m.Write(payload)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return "", false
	}
	return string(payload), true
}

var errBadState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed its integrity check"}

func need(reqs mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

func (f *fixtures) inputRequiredTools() {
	s := f.server
	add(s, "test_input_required_result_elicitation", "MRTR: asks for the caller's name.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if c := accepted(req.Params.InputResponses, "user_name"); c != nil {
			if n, _ := c["name"].(string); n != "" {
				return result(&mcp.TextContent{Text: "Hello, " + n + "!"}), nil, nil
			}
		}
		return need(mcp.InputRequestMap{"user_name": askName("What is your name?")}, ""), nil, nil
	})
	add(s, "test_input_required_result_sampling", "MRTR: asks the client's model a question.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if t, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
			return result(&mcp.TextContent{Text: "model answered: " + t}), nil, nil
		}
		return need(mcp.InputRequestMap{"capital_question": askModel("What is the capital of France?")}, ""), nil, nil
	})
	add(s, "test_input_required_result_list_roots", "MRTR: asks for the client's roots.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok && r != nil {
			uris := make([]string, len(r.Roots))
			for i, root := range r.Roots {
				uris[i] = root.URI
			}
			return result(&mcp.TextContent{Text: fmt.Sprintf("%d root(s): %s", len(r.Roots), strings.Join(uris, ", "))}), nil, nil
		}
		return need(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, ""), nil, nil
	})
	confirm := func() mcp.InputRequestMap {
		return mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Please confirm",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"}}}}
	}
	checked := func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if st := req.Params.RequestState; st != "" {
			if _, ok := f.open(st); !ok {
				return nil, nil, errBadState
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return result(&mcp.TextContent{Text: "state verified and confirmation accepted"}), nil, nil
			}
		}
		return need(confirm(), f.seal("confirm")), nil, nil
	}
	add(s, "test_input_required_result_request_state", "MRTR: round-trips an HMAC-protected requestState.", checked)
	add(s, "test_input_required_result_tampered_state", "MRTR: rejects a requestState that fails its HMAC.", checked)
	add(s, "test_input_required_result_multiple_inputs", "MRTR: asks for elicitation, sampling and roots at once.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		r := req.Params.InputResponses
		name, _ := accepted(r, "user_name")["name"].(string)
		greeting, okG := sampled(r, "greeting")
		roots, okR := r["client_roots"].(*mcp.ListRootsResult)
		if name != "" && okG && okR && roots != nil {
			return result(&mcp.TextContent{Text: fmt.Sprintf("%s %s (%d roots)", greeting, name, len(roots.Roots))}), nil, nil
		}
		return need(mcp.InputRequestMap{"user_name": askName("What is your name?"), "greeting": askModel("Write a greeting"), "client_roots": &mcp.ListRootsParams{}}, f.seal("multi")), nil, nil
	})
	add(s, "test_input_required_result_multi_round", "MRTR: two elicitation rounds carried in requestState.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		st := req.Params.RequestState
		if st == "" {
			return need(mcp.InputRequestMap{"step1": askName("Step 1: your name?")}, f.seal("round1")), nil, nil
		}
		payload, ok := f.open(st)
		if !ok {
			return nil, nil, errBadState
		}
		if payload == "round1" {
			name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
			if name == "" {
				name = "unknown"
			}
			return need(mcp.InputRequestMap{"step2": &mcp.ElicitParams{Message: "Step 2: favourite colour?", RequestedSchema: nameSchema("color")}}, f.seal("round2:"+name)), nil, nil
		}
		name := strings.TrimPrefix(payload, "round2:")
		color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
		if color == "" {
			color = "unknown"
		}
		return result(&mcp.TextContent{Text: fmt.Sprintf("%s likes %s", name, color)}), nil, nil
	})
	add(s, "test_input_required_result_capabilities", "MRTR: asks only for what the client declared.", func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) > 0 {
			return result(&mcp.TextContent{Text: "inputs received"}), nil, nil
		}
		caps := req.ClientCapabilities()
		reqs := mcp.InputRequestMap{}
		if caps != nil && caps.Elicitation != nil {
			reqs["user_name"] = askName("What is your name?")
		}
		if caps != nil && caps.Sampling != nil {
			reqs["greeting"] = askModel("Write a short greeting")
		}
		if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
			reqs["client_roots"] = &mcp.ListRootsParams{}
		}
		if len(reqs) == 0 {
			return result(&mcp.TextContent{Text: "the client declared no capability that an input request could use"}), nil, nil
		}
		return need(reqs, ""), nil, nil
	})
}

// --- resources ---

var templateRE = regexp.MustCompile(`^test://template/([^/]+)/data$`)

func (f *fixtures) resources() {
	s := f.server
	s.AddResource(&mcp.Resource{Name: "static-text", Description: "A fixed text resource.", MIMEType: "text/plain", URI: "test://static-text"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "Static text from the Tidings fixture server."}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static-binary", Description: "A fixed PNG resource.", MIMEType: "image/png", URI: "test://static-binary"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pngPixel()}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "Data by id.", MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			m := templateRE.FindStringSubmatch(req.Params.URI)
			if m == nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			b, _ := json.Marshal(map[string]any{"id": m[1], "templateTest": true, "data": "data for " + m[1]})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain", URI: "test://watched-resource"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "watched content at " + time.Now().UTC().Format(time.RFC3339)}}}, nil
		})
}

// --- prompts ---

func (f *fixtures) prompts() {
	s := f.server
	msg := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "simple", Messages: []*mcp.PromptMessage{msg(&mcp.TextContent{Text: "A simple fixture prompt."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "Substitutes arg1 and arg2.",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "first value", Required: true}, {Name: "arg2", Description: "second value", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Description: "with arguments", Messages: []*mcp.PromptMessage{msg(&mcp.TextContent{Text: fmt.Sprintf("arg1=%q arg2=%q", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with a resource", Description: "Embeds the named resource.",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return &mcp.GetPromptResult{Description: "embedded resource", Messages: []*mcp.PromptMessage{
				msg(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded prompt resource."}}),
				msg(&mcp.TextContent{Text: "Use the resource above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "Includes a PNG."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "image", Messages: []*mcp.PromptMessage{
				msg(&mcp.ImageContent{Data: pngPixel(), MIMEType: "image/png"}),
				msg(&mcp.TextContent{Text: "Describe the image above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "MRTR: asks for context before building the prompt."},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c := accepted(req.Params.InputResponses, "user_context"); c != nil {
				ctxText, _ := c["context"].(string)
				return &mcp.GetPromptResult{Description: "with context", Messages: []*mcp.PromptMessage{msg(&mcp.TextContent{Text: "Context: " + ctxText})}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: nameSchema("context")}}}, nil
		})
}
