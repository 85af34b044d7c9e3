package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Protocol versions. A request without protocol_version is a 1.2 request.
const (
	Version12 = "1.2"
	Version13 = "1.3"
	// ProtocolMajor is the major version this package speaks; a peer with
	// another major version is refused (fail closed).
	ProtocolMajor = 1
)

// MaxRequestSize is protocol 1.2's request file limit (64 KiB).
const MaxRequestSize = 64 << 10

// MaxIDLength bounds a request id. Ids become file names.
const MaxIDLength = 128

// Protocol 1.2's action names.
const (
	ActionStatus         = "status"
	ActionReview         = "review"
	ActionSearch         = "search"
	ActionChatHistory    = "chat_history"
	ActionResponseStats  = "response_stats"
	ActionContactsLookup = "contacts_lookup"
	ActionListChats      = "list_chats"
	ActionSendPreview    = "send_preview"
	ActionSend           = "send"
)

// Error strings protocol 1.2 defines; clients match them.
const (
	ErrTextNotPermitted = "action not permitted on this bridge"
	ErrTextMissingNonce = "send gate: missing nonce; call send_preview first"
	ErrTextPayloadDiff  = "send payload differs from preview"
	ErrTextCancelled    = "send cancelled by user or timed out (60s dialog limit)"
)

// Error codes, sent as "error_code" in 1.3 responses only.
const (
	CodeInvalidRequest = "invalid_request"
	CodeInvalidParams  = "invalid_params"
	CodeUnknownAction  = "unknown_action"
	CodeNotPermitted   = "not_permitted"
	CodeRoleInvalid    = "role_invalid"
	CodeDuplicateID    = "duplicate_id"
	CodeVersion        = "unsupported_version"
	CodeUnavailable    = "unavailable"
	CodeNotFound       = "not_found"
	// CodeOutsideWindow: the request reaches past the 90-day read window
	// of a host bridge (older messages exist but are not served).
	CodeOutsideWindow = "outside_window"
	CodeInternal      = "internal"
)

// Request is a parsed request file.
type Request struct {
	ID     string
	Action string
	// Params holds the params object's members, undecoded.
	Params map[string]json.RawMessage
	// Version is "1.2" or "1.3": the protocol the answer must follow.
	Version string
}

// RequestError is a request that cannot be served as written. Its message
// is safe to return to the client: it never echoes more than a short,
// quoted excerpt of the input.
type RequestError struct {
	Code string
	Msg  string
}

func (e *RequestError) Error() string { return e.Msg }

func invalid(format string, args ...any) *RequestError {
	return &RequestError{Code: CodeInvalidRequest, Msg: "invalid request: " + fmt.Sprintf(format, args...)}
}

// ValidID reports whether id may name a request: 1–128 characters from
// [A-Za-z0-9._:-], starting with a letter or digit. The id becomes part of
// a file name, so nothing else is accepted.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-' || c == ':') && i > 0:
		default:
			return false
		}
	}
	return true
}

// RequestName and ResponseName are the file names of a request and its
// response.
func RequestName(id string) string  { return "request-" + id + ".json" }
func ResponseName(id string) string { return "response-" + id + ".json" }

// idFromRequestName returns the id in "request-<id>.json", or false when
// the name has another shape (temp files, strangers).
func idFromRequestName(name string) (string, bool) {
	if !strings.HasPrefix(name, "request-") || !strings.HasSuffix(name, ".json") {
		return "", false
	}
	return name[len("request-") : len(name)-len(".json")], true
}

// ParseRequest decodes a request file. fileID is the id from the file name
// ("" to skip the check); the id inside must equal it, because the answer
// is written where the client waits: response-<fileID>.json.
//
// The rules (docs/bridge.md, "Wire format"): at most 64 KiB; the top-level
// value is an object with a string "id", a string "action" and an object
// "params"; "protocol_version", when present, is a string "1.x". Duplicate
// keys at the top level or inside params are refused, so two parsers can
// never disagree about what was asked. Unknown top-level keys are ignored.
func ParseRequest(data []byte, fileID string) (Request, error) {
	if len(data) > MaxRequestSize {
		return Request{}, invalid("request file is larger than %d bytes", MaxRequestSize)
	}
	if !utf8.Valid(data) {
		return Request{}, invalid("request is not valid UTF-8")
	}
	top, err := decodeObject(data)
	if err != nil {
		return Request{}, invalid("%s", err)
	}
	var r Request
	rawID, ok := top["id"]
	if !ok {
		return Request{}, invalid(`"id" is missing`)
	}
	if err := json.Unmarshal(rawID, &r.ID); err != nil || !isString(rawID) {
		return Request{}, invalid(`"id" must be a string`)
	}
	if !ValidID(r.ID) {
		return Request{}, invalid(`"id" must be 1-%d characters of letters, digits, '.', '_', ':' or '-'`, MaxIDLength)
	}
	if fileID != "" && r.ID != fileID {
		return Request{}, invalid(`"id" %s does not match the file name's id %s`, excerpt(r.ID), excerpt(fileID))
	}
	rawAction, ok := top["action"]
	if !ok {
		return Request{}, invalid(`"action" is missing`)
	}
	if !isString(rawAction) || json.Unmarshal(rawAction, &r.Action) != nil {
		return Request{}, invalid(`"action" must be a string`)
	}
	rawParams, ok := top["params"]
	if !ok {
		return Request{}, invalid(`"params" is missing; send an object ({} when the action takes none)`)
	}
	if r.Params, err = decodeObject(rawParams); err != nil {
		return Request{}, invalid(`"params" must be an object: %s`, err)
	}
	r.Version = Version12
	if rawV, ok := top["protocol_version"]; ok {
		var v string
		if !isString(rawV) || json.Unmarshal(rawV, &v) != nil {
			return Request{}, invalid(`"protocol_version" must be a string such as "1.3"`)
		}
		major, minor, ok := parseVersion(v)
		if !ok {
			return Request{}, invalid(`"protocol_version" %s is not a version such as "1.3"`, excerpt(v))
		}
		if major != ProtocolMajor {
			return Request{}, &RequestError{Code: CodeVersion, Msg: fmt.Sprintf(
				"unsupported protocol_version %s: this helper speaks %d.x (up to %s); upgrade the older side so both share a major version",
				excerpt(v), ProtocolMajor, Version13)}
		}
		if minor >= 3 {
			r.Version = Version13 // minors are backward compatible: serve the newest we know
		}
	}
	return r, nil
}

// parseVersion parses "MAJOR.MINOR".
func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found || a == "" || b == "" || len(v) > 16 {
		return 0, 0, false
	}
	var err error
	if major, err = strconv.Atoi(a); err != nil || major < 0 || a[0] == '+' || a[0] == '-' {
		return 0, 0, false
	}
	if minor, err = strconv.Atoi(b); err != nil || minor < 0 || b[0] == '+' || b[0] == '-' {
		return 0, 0, false
	}
	return major, minor, true
}

// CheckVersion reports whether a peer's protocol_version is compatible
// with this package: same major version. The error tells the user which
// side to upgrade.
func CheckVersion(peer string) error {
	major, _, ok := parseVersion(peer)
	if !ok {
		return fmt.Errorf("bridge helper reports protocol_version %s, which is not a version; refusing to talk to it (upgrade or reinstall the helper with `tidings bridge install`)", excerpt(peer))
	}
	if major != ProtocolMajor {
		if major > ProtocolMajor {
			return fmt.Errorf("bridge helper speaks protocol %s but this client speaks %d.x; refusing to talk to it: upgrade this client (tidings) to a release that speaks %d.x", peer, ProtocolMajor, major)
		}
		return fmt.Errorf("bridge helper speaks protocol %s but this client speaks %d.x; refusing to talk to it: upgrade the helper (reinstall it with `tidings bridge install`)", peer, ProtocolMajor)
	}
	return nil
}

// decodeObject decodes one JSON object and nothing after it, refusing
// duplicate keys.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, errors.New("not JSON")
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return nil, errors.New("the top-level value must be a JSON object")
	}
	out := map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, errors.New("malformed JSON")
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, errors.New("malformed JSON")
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %s", excerpt(key))
		}
		out[key] = raw
	}
	if _, err := d.Token(); err != nil { // the closing brace
		return nil, errors.New("malformed JSON")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// excerpt quotes a caller-supplied string for an error message, cut to 40
// bytes so an error never echoes a large input.
func excerpt(s string) string {
	const limit = 40
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// Response is a decoded response, as a client sees it. Raw holds the whole
// object for the action-specific fields.
type Response struct {
	ID             string   `json:"id"`
	OK             bool     `json:"ok"`
	Action         string   `json:"action,omitempty"`
	Error          string   `json:"error,omitempty"`
	ErrorCode      string   `json:"error_code,omitempty"`
	BridgeRole     string   `json:"bridge_role,omitempty"`
	AllowedActions []string `json:"allowed_actions,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Decode unmarshals the action-specific fields into v.
func (r *Response) Decode(v any) error {
	if err := json.Unmarshal(r.Raw, v); err != nil {
		return fmt.Errorf("decode %s response: %w", r.Action, err)
	}
	return nil
}

// reserved are the envelope keys a result object must not contain.
var reserved = map[string]bool{"id": true, "ok": true, "action": true, "error": true, "error_code": true}

// encodeOK builds {"id":…,"ok":true,"action":…, <result's fields>,
// <extra fields>}. The result must marshal to a JSON object without
// envelope keys; extra fields (1.3 only) whose keys the result already
// has, or that are reserved, are dropped.
func encodeOK(id, action string, result any, extra map[string]any) ([]byte, error) {
	body, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", action, err)
	}
	fields, err := decodeObject(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", action, err)
	}
	for k := range fields {
		if reserved[k] {
			return nil, fmt.Errorf("encode %s result: field %q is reserved for the envelope", action, k)
		}
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(id) + len(action) + 40)
	b.WriteString(`{"id":`)
	writeJSONString(&b, id)
	b.WriteString(`,"ok":true,"action":`)
	writeJSONString(&b, action)
	inner := bytes.TrimSpace(body)
	inner = bytes.TrimSpace(inner[1 : len(inner)-1])
	if len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if _, dup := fields[k]; !dup && !reserved[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := json.Marshal(extra[k])
		if err != nil {
			return nil, fmt.Errorf("encode %s result: field %q: %w", action, k, err)
		}
		b.WriteByte(',')
		writeJSONString(&b, k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// errorBody is an error response. AllowedActions is never nil: protocol 1.2
// puts the role's list in every error.
type errorBody struct {
	ID             string   `json:"id"`
	OK             bool     `json:"ok"`
	Error          string   `json:"error"`
	ErrorCode      string   `json:"error_code,omitempty"`
	BridgeRole     string   `json:"bridge_role"`
	AllowedActions []string `json:"allowed_actions"`
}

func encodeError(e errorBody) []byte {
	if e.AllowedActions == nil {
		e.AllowedActions = []string{}
	}
	b, err := json.Marshal(e)
	if err != nil { // only strings and a slice of strings: cannot fail
		panic(err)
	}
	return append(b, '\n')
}

// appendFields adds fields (sorted, skipping keys the object already has
// or that are reserved) to an encoded JSON object ending in "}\n".
func appendFields(obj []byte, fields map[string]any) ([]byte, error) {
	have, err := decodeObject(obj)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if _, dup := have[k]; !dup && !reserved[k] && k != "bridge_role" && k != "allowed_actions" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Write(bytes.TrimRight(bytes.TrimSpace(obj), "}"))
	for _, k := range keys {
		v, err := json.Marshal(fields[k])
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		writeJSONString(&b, k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}
