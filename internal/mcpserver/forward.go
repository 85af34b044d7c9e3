package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Service tools through the bridge (docs/bridge.md, "Service tools
// through the bridge"): in `serve --bridge` a Bridged tool is registered
// with its usual definition and a forwarding handler (Tool.forward); the
// helper answers the protocol 1.3 action of the same name by calling the
// very same tool on an in-process server (NewBridgedServer). Both ends use
// the tool's In and Out types, so the forwarded answer is the in-process
// answer.

// forwardCall sends one call of tool to the helper and turns its
// CallToolResult back into the typed handler's return values: an isError
// result becomes the same one-sentence error, a success keeps the
// helper's content blocks and its structured content (decoded into Out,
// which go-sdk validates against the output schema again).
func forwardCall[Out any](ctx context.Context, d *Deps, tool string, args json.RawMessage) (*mcp.CallToolResult, Out, error) {
	var zero Out
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	raw, err := d.BridgeCall(ctx, tool, args)
	if err != nil {
		return nil, zero, forwardError{sanitize.Message(fmt.Sprintf("%s: the bridge helper did not answer: %v", tool, err))}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, zero, forwardError{fmt.Sprintf("%s: the bridge helper's answer could not be read (%v); is the helper the same version as this server?", tool, err)}
	}
	if res.IsError {
		return nil, zero, forwardError{contentText(res.Content)}
	}
	var out Out
	if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err == nil {
			err = json.Unmarshal(sc, &out)
		}
		if err != nil {
			return nil, zero, forwardError{fmt.Sprintf("%s: the bridge helper's structured answer does not fit this server's output schema (%v); update the helper", tool, err)}
		}
	}
	return &mcp.CallToolResult{Content: res.Content, Meta: res.Meta}, out, nil
}

// forwardError carries text that is already sanitized (by the helper's
// quotedError, or here): go-sdk puts it into the isError result as is.
type forwardError struct{ msg string }

func (e forwardError) Error() string { return e.msg }

// contentText joins a result's text blocks (an isError result's sentence).
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if len(parts) == 0 {
		return "the bridge helper reported an error without a message"
	}
	return strings.Join(parts, "\n")
}

// BridgedTools lists the Bridged tools of services that can work in this
// process, in service order: the 1.3 actions a bridge helper offers.
func BridgedTools(services ...Service) []Tool {
	var out []Tool
	for _, svc := range services {
		if svc.Unavailable != "" {
			continue
		}
		for _, t := range svc.Tools {
			if t.Bridged {
				out = append(out, t)
			}
		}
	}
	return out
}

// BridgedServer is the helper's side of the forwarding: an in-process
// server holding only the Bridged tools of services (with their real
// handlers) and a client connected to it in memory. The helper answers a
// tool's 1.3 action with Call, so the helper runs the same handler, the
// same argument validation and the same output boundary as the
// in-process mode.
type BridgedServer struct {
	Tools []Tool
	cs    *mcp.ClientSession
	ss    *mcp.ServerSession
}

// NewBridgedServer builds the helper's in-process server over deps. The
// profile filters do not apply here: serve decided which tools exist, and
// the helper answers what serve forwards.
func NewBridgedServer(ctx context.Context, deps *Deps, services ...Service) (*BridgedServer, error) {
	deps.Services = services
	deps.fill()
	tools := BridgedTools(services...)
	for _, t := range tools {
		if err := Validate(t); err != nil {
			return nil, err
		}
	}
	s := NewStack(StackOptions{Name: ServerName, Version: deps.Version, Logger: deps.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	for _, t := range tools {
		t.register(s, t.Def(), deps)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("bridged tools: %w", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tidings-helper", Version: deps.Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, fmt.Errorf("bridged tools: %w", err)
	}
	return &BridgedServer{Tools: tools, cs: cs, ss: ss}, nil
}

// Call runs tool with args (a JSON object) and returns its CallToolResult
// as JSON, isError results included: those are answers, not failures.
func (b *BridgedServer) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	res, err := b.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return json.Marshal(res)
}

// Close ends the in-memory session.
func (b *BridgedServer) Close() error {
	return errors.Join(b.cs.Close(), b.ss.Wait())
}
