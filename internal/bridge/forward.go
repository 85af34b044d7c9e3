//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"fmt"
)

// Typed 1.3 extension actions carry a Go value each way: the request's
// params object is the JSON of a parameter value P, and a successful
// answer is {"id","ok":true,"action","result": <JSON of R>}. Nesting the
// result under "result" keeps any field name of R clear of the envelope.
// Both sides use the same Go types, so a value crosses the bridge exactly
// as it would be returned in-process — which is how `tidings serve
// --bridge` gives the same answers as the in-process mode.

// extResult is the shape of a typed extension answer.
type extResult[R any] struct {
	Result R `json:"result"`
}

// Handler builds a typed extension action: params decode into P (unknown
// fields are ignored, as minor versions may add some), fn answers, and
// the result travels under "result". bodies marks an action that returns
// message content; it is never served on a manager bridge.
func Handler[P, R any](name string, bodies bool, fn func(ctx context.Context, b Backend, p P) (R, error)) Extension {
	return Extension{Name: name, Host: true, ReturnsBodies: bodies,
		Handle: func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
			var p P
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, &RequestError{Code: CodeInvalidParams, Msg: fmt.Sprintf("%s params do not match the expected shape: %v", name, err)}
			}
			r, err := fn(ctx, b, p)
			if err != nil {
				return nil, err
			}
			return extResult[R]{Result: r}, nil
		}}
}

// Forward calls a typed extension action through c (speaking protocol
// 1.3) and decodes its result. The helper's status is checked first
// (Connect), and an extension the helper does not offer is reported as
// such, with the helper's version, instead of as an unknown action.
func Forward[R any](ctx context.Context, c *Client, action string, p any) (R, error) {
	var zero R
	st, err := c.Connect(ctx)
	if err != nil {
		return zero, err
	}
	if c.Version != Version13 {
		return zero, fmt.Errorf("%s is a protocol 1.3 action but this client speaks %s: %w", action, c.Version, ErrUnavailable)
	}
	if st.ProtocolVersion != Version13 {
		return zero, fmt.Errorf("%s needs bridge protocol 1.3 but the helper speaks %s: upgrade the helper (reinstall it with `tidings bridge install`): %w",
			action, st.ProtocolVersion, ErrUnavailable)
	}
	if !c.Offers(action) {
		return zero, fmt.Errorf("the bridge helper (version %s, role %s) does not offer %s: %w", st.HelperVersion, st.BridgeRole, action, ErrUnavailable)
	}
	r, err := c.Call(ctx, action, p)
	if err != nil {
		return zero, err
	}
	var out extResult[R]
	if err := r.Decode(&out); err != nil {
		return zero, err
	}
	return out.Result, nil
}
