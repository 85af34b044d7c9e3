package coerce_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

type toolIn struct {
	Query string        `json:"query,omitempty"`
	Limit coerce.Number `json:"limit,omitzero" jsonschema:"maximum results, 1-200 (default 20)"`
}

func validate(t *testing.T, s *jsonschema.Schema, args string) error {
	t.Helper()
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatal(err)
	}
	return r.Validate(v)
}

// TestDefaultInferenceIsDishonest pins why TypeSchemas exists: without it
// the SDK's inference makes Number an object and rejects a plain number.
func TestDefaultInferenceIsDishonest(t *testing.T) {
	s, err := jsonschema.For[toolIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Properties["limit"].Type; got != "object" {
		t.Fatalf("default inferred type = %q; if jsonschema-go now honours a hook, revisit coerce.TypeSchemas", got)
	}
	if err := validate(t, s, `{"limit":5}`); err == nil {
		t.Fatal("default schema accepted a number; expected the documented rejection")
	}
}

func TestTypeSchemasMakeNumberHonest(t *testing.T) {
	s, err := jsonschema.For[toolIn](&jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Properties["limit"]
	if !slices.Equal(p.Types, []string{"integer", "number", "string", "null"}) || p.Description == "" {
		t.Fatalf("limit schema = %+v", p)
	}
	if slices.Contains(s.Required, "limit") {
		t.Error("limit is required; omitzero should make it optional")
	}
	for _, ok := range []string{`{}`, `{"limit":5}`, `{"limit":5.0}`, `{"limit":"50"}`, `{"limit":null}`, `{"limit":1e308}`} {
		if err := validate(t, s, ok); err != nil {
			t.Errorf("schema rejected %s: %v", ok, err)
		}
	}
	for _, bad := range []string{`{"limit":true}`, `{"limit":{}}`, `{"limit":[1]}`} {
		if err := validate(t, s, bad); err == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}

// TestThroughTheSDK runs a real go-sdk server and client in memory: the
// schema lets every lenient form through, and coerce turns bad values into
// isError results naming the parameter; the server keeps serving.
func TestThroughTheSDK(t *testing.T) {
	ctx := context.Background()
	schema, err := jsonschema.For[toolIn](&jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "coerce-test", Version: "0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "count", InputSchema: schema}, func(_ context.Context, _ *mcp.CallToolRequest, in toolIn) (*mcp.CallToolResult, any, error) {
		n, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: 20, Min: 1, Max: 200, Clamp: true})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(n)}}}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tests := []struct {
		args    string
		text    string
		isError bool
	}{
		{`{}`, "20", false},
		{`{"limit":5}`, "5", false},
		{`{"limit":5.0}`, "5", false},
		{`{"limit":"50"}`, "50", false},
		{`{"limit":" 7 "}`, "7", false},
		{`{"limit":null}`, "20", false},
		{`{"limit":9956}`, "200", false},
		{`{"limit":-1}`, "limit must be an integer from 1 to 200 (got -1)", true},
		{`{"limit":"nan"}`, "not a finite number", true},
		{`{"limit":1e308}`, "far out of range", true},
		{`{"limit":9223372036854775808}`, "far out of range", true},
		{`{"limit":5.5}`, "not a whole number", true},
		{`{"limit":"9999-12-31"}`, "not a number", true},
		{`{"limit":true}`, "limit", true},
		{`{"limit":{}}`, "limit", true},
		{`{"limit":3}`, "3", false}, // still serving after every error
	}
	for _, tt := range tests {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: json.RawMessage(tt.args)})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tt.args, err)
		}
		var text string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		if res.IsError != tt.isError || !strings.Contains(text, tt.text) {
			t.Errorf("%s: isError=%v text=%q; want isError=%v containing %q", tt.args, res.IsError, text, tt.isError, tt.text)
		}
	}
}
