package mcpserver

import (
	"bytes"
	"encoding/json"
	"math/big"
)

// maxExact is 2^53, the largest magnitude below which every integer has
// its own IEEE double (docs/security.md, "Input coercion").
var maxExact = new(big.Float).SetInt64(1 << 53)

// quoteHugeNumbers keeps a tool argument's number above 2^53 in magnitude
// as the text it was written in. go-sdk decodes arguments into float64
// before the handler sees them, and 2^53+1 rounds to exactly 2^53, which the
// coercion then accepts; as a string of the same text, coerce reads it as
// written and refuses it with a sentence naming the parameter. Only the
// arguments of a tools/call change; every other message, and any line
// without a run of fifteen digits or an exponent (all but a few), is returned as nil:
// unchanged, never re-encoded.
func quoteHugeNumbers(msg []byte) []byte {
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
	dec := json.NewDecoder(bytes.NewReader(params["arguments"]))
	dec.UseNumber()
	var args any
	if dec.Decode(&args) != nil {
		return nil
	}
	changed := false
	args = quoteHuge(args, &changed)
	if !changed {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	params["arguments"] = b
	if top["params"], err = json.Marshal(params); err != nil {
		return nil
	}
	out, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	return out
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
