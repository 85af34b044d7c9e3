//go:build unix

package bridge

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service"
)

// FuzzParseRequest: the request parser never panics, accepts only what
// the rules allow, refuses with a short RequestError, and what it accepts
// survives a re-encode unchanged.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"id":"abc123","action":"status","params":{}}`), "abc123")
	f.Add([]byte(`{"id":"abc123","action":"review","params":{"days":2},"protocol_version":"1.3"}`), "")
	f.Add([]byte(`{"id":"a","action":"x","action":"y","params":{}}`), "a")
	f.Add([]byte(`[1,2,3]`), "a")
	f.Fuzz(func(t *testing.T, data []byte, fileID string) {
		req, err := ParseRequest(data, fileID)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Code == "" {
				t.Fatalf("error is not a coded RequestError: %v", err)
			}
			if len(re.Msg) > 400 {
				t.Fatalf("error message of %d bytes echoes the input", len(re.Msg))
			}
			return
		}
		if len(data) > MaxRequestSize || !ValidID(req.ID) || (fileID != "" && req.ID != fileID) || req.Params == nil {
			t.Fatalf("accepted %q as %+v", data, req)
		}
		if req.Version != Version12 && req.Version != Version13 {
			t.Fatalf("version %q", req.Version)
		}
		params, err := json.Marshal(req.Params)
		if err != nil {
			t.Fatal(err)
		}
		again, err := encodeRequest(req.ID, req.Action, json.RawMessage(params), req.Version)
		if err != nil {
			if len(again) == 0 && len(params)+len(req.Action) > MaxRequestSize-100 {
				return // re-encoding can grow escapes past the limit
			}
			t.Fatalf("re-encode: %v", err)
		}
		req2, err := ParseRequest(again, req.ID)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", again, err)
		}
		if req2.Action != req.Action || req2.Version != req.Version || !reflect.DeepEqual(canon(t, req2.Params), canon(t, req.Params)) {
			t.Fatalf("round trip changed the request: %+v → %+v", req, req2)
		}
	})
}

func canon(t *testing.T, p map[string]json.RawMessage) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("param %q is not JSON: %v", k, err)
		}
		out[k] = x
	}
	return out
}

// FuzzDecodeParams: the typed 1.3 params decoder never panics, refuses
// with a short coded RequestError, and what it accepts holds only finite
// numbers within 2^53, whole where the field is an integer.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{`{}`, `{"Query":"x","Limit":"5","Days":30.5,"from_me":true}`, `{"limit":1e308}`,
		`{"Limit":1,"limit":2}`, `{"Cursor":null,"Unknown":[]}`, `{"Unknown":{"a":1}}`, `{"Context":"-0"}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeParams[service.SearchParams]("search_messages", data)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Code != CodeInvalidParams {
				t.Fatalf("error is not an invalid_params RequestError: %v", err)
			}
			if len(re.Msg) > 400 {
				t.Fatalf("error message of %d bytes echoes the input", len(re.Msg))
			}
			return
		}
		if math.IsNaN(p.Days) || math.Abs(p.Days) > coerce.MaxMagnitude || p.Limit > coerce.MaxMagnitude || p.Limit < -coerce.MaxMagnitude ||
			p.Context > coerce.MaxMagnitude || p.Context < -coerce.MaxMagnitude {
			t.Fatalf("accepted %s as %+v", data, p)
		}
	})
}
