package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxExact is 2^53, the largest magnitude below which every integer has
// its own IEEE double (docs/security.md, "Input coercion").
var maxExact = new(big.Float).SetInt64(1 << 53)

// quoteHugeArguments is the receiving middleware (installed by NewStack)
// that keeps every tools/call argument number above 2^53 in magnitude as
// the text it was written in, whatever carried the request: stdio, HTTP,
// a 2025-03-26 batch, an in-process transport. go-sdk decodes arguments
// into float64 before the handler sees them, so 2^53+1 would round to
// exactly 2^53 (which the coercion then accepts) and 1e309 would fail
// with the decoder's "cannot unmarshal … Go struct field" text; as a
// string of the same text, coerce reads it as written and refuses it with
// one sentence naming the parameter. It works on the raw arguments of the
// request, before go-sdk's schema validation, so every tool built with
// Define gets it and no tool handles it itself.
func quoteHugeArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil {
			if q := quoteHugeNumbers(ct.Params.Arguments); q != nil {
				ct.Params.Arguments = q
			}
		}
		return next(ctx, method, req)
	}
}

// quoteHugeMessage is quoteHugeNumbers applied to one whole tools/call
// message on the wire (the stdio and HTTP screens), or nil when the message
// is anything else or nothing changed (then it is not re-encoded). The
// middleware alone is not enough: go-sdk's Streamable HTTP handler decodes
// a 2026-07-28 request's params to check its Mcp-Name header before any
// middleware runs, and answers 1e309 with "-32020 failed to extract name";
// quoted on the wire first, the request reaches the coercion.
func quoteHugeMessage(msg []byte) []byte {
	if !hasDigitRun(msg, 15) && !hasExponent(msg) {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return nil
	}
	var method string
	if json.Unmarshal(top["method"], &method) != nil || method != "tools/call" {
		return nil
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(top["params"], &params) != nil || params["arguments"] == nil {
		return nil
	}
	q := quoteHugeNumbers(params["arguments"])
	if q == nil {
		return nil
	}
	params["arguments"] = q
	var err error
	if top["params"], err = json.Marshal(params); err != nil {
		return nil
	}
	out, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	return out
}

// quoteHugeNumbers returns the arguments object args with every number
// above 2^53 in magnitude (including those beyond float64's range) turned
// into a string of its text, or nil when nothing changed: arguments
// without a run of fifteen digits or an exponent (all but a few) are
// returned as nil without being decoded.
func quoteHugeNumbers(args json.RawMessage) json.RawMessage {
	if !hasDigitRun(args, 15) && !hasExponent(args) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	changed := false
	v = quoteHuge(v, &changed)
	if !changed {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func quoteHuge(v any, changed *bool) any {
	switch x := v.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
		if err == nil && new(big.Float).Abs(f).Cmp(maxExact) > 0 {
			*changed = true
			return string(x)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = quoteHuge(e, changed)
		}
	case []any:
		for i, e := range x {
			x[i] = quoteHuge(e, changed)
		}
	}
	return v
}

// hasExponent reports whether b holds a digit followed by an exponent
// mark (9.007199254740993e15 rounds to 2^53 too).
func hasExponent(b []byte) bool {
	for i := 1; i < len(b); i++ {
		if (b[i] == 'e' || b[i] == 'E') && b[i-1] >= '0' && b[i-1] <= '9' {
			return true
		}
	}
	return false
}

// hasDigitRun reports whether b holds n ASCII digits in a row.
func hasDigitRun(b []byte, n int) bool {
	run := 0
	for _, c := range b {
		if c >= '0' && c <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
