package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

// Parameter bounds and defaults. Protocol 1.2 (docs/bridge.md, "Actions and
// parameters") fixes list_chats' table and the 90-day read window of
// review, search and chat_history (values above it are capped, and the
// response echoes the effective window); the other defaults follow
// protocol 1.2's examples.
const (
	MaxReadDays       = 90
	MaxListChatsDays  = 3650
	MaxLimit          = 500
	MaxStatsHours     = 8760 // a year, the query layer's bound (response_stats returns no bodies)
	MaxQueryChars     = 100  // list_chats query, contacts_lookup name
	MaxTermChars      = 500  // search term
	MaxChatChars      = 200  // chat_history / response_stats chat
	DefaultReviewDays = 2
	DefaultSearchDays = 30
	DefaultChatDays   = 14
	DefaultLimit      = 100
	DefaultStatsHours = 24
	DefaultListDays   = 365
	DefaultListLimit  = 200
)

func paramErr(err error) error {
	return &RequestError{Code: CodeInvalidParams, Msg: err.Error()}
}

func paramErrf(format string, args ...any) error {
	return &RequestError{Code: CodeInvalidParams, Msg: fmt.Sprintf(format, args...)}
}

// str reads an optional string parameter: absent or null is ("", false).
func str(p map[string]json.RawMessage, name string, maxChars int) (string, bool, error) {
	raw, ok := p[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return "", false, nil
	}
	if !isString(raw) {
		return "", false, paramErrf("%s must be a string", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, paramErrf("%s must be a string", name)
	}
	if maxChars > 0 && utf8.RuneCountInString(s) > maxChars {
		return "", false, paramErrf("%s must be at most %d characters (got %d)", name, maxChars, utf8.RuneCountInString(s))
	}
	return s, true, nil
}

// required reads a string parameter that must be present and not blank.
func required(p map[string]json.RawMessage, name string, maxChars int) (string, error) {
	s, ok, err := str(p, name, maxChars)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(s) == "" {
		return "", paramErrf("%s is required (a non-empty string)", name)
	}
	return s, nil
}

func days(p map[string]json.RawMessage, def, max float64, clamp bool) (float64, error) {
	v, err := coerce.Days(raw(p, "days"), coerce.DaysSpec{Name: "days", Default: def, Max: max, Clamp: clamp})
	if err != nil {
		return 0, paramErr(err)
	}
	return v, nil
}

func limit(p map[string]json.RawMessage, def int, clamp bool) (int, error) {
	v, err := coerce.Int(raw(p, "limit"), coerce.IntSpec{Name: "limit", Default: def, Min: 1, Max: MaxLimit, Clamp: clamp})
	if err != nil {
		return 0, paramErr(err)
	}
	return v, nil
}

// raw returns the parameter as json.RawMessage, or nil when absent (coerce
// treats both nil and JSON null as "not given").
func raw(p map[string]json.RawMessage, name string) any {
	if r, ok := p[name]; ok {
		return r
	}
	return nil
}

func parseReview(p map[string]json.RawMessage) (ReviewParams, error) {
	d, err := days(p, DefaultReviewDays, MaxReadDays, true)
	return ReviewParams{Days: d}, err
}

func parseSearch(p map[string]json.RawMessage) (SearchParams, error) {
	var out SearchParams
	var err error
	if out.Term, err = required(p, "term", MaxTermChars); err != nil {
		return out, err
	}
	if out.Days, err = days(p, DefaultSearchDays, MaxReadDays, true); err != nil {
		return out, err
	}
	out.Limit, err = limit(p, DefaultLimit, true)
	return out, err
}

func parseChatHistory(p map[string]json.RawMessage) (ChatHistoryParams, error) {
	var out ChatHistoryParams
	var err error
	if out.Chat, err = required(p, "chat", MaxChatChars); err != nil {
		return out, err
	}
	if out.Days, err = days(p, DefaultChatDays, MaxReadDays, true); err != nil {
		return out, err
	}
	out.Limit, err = limit(p, DefaultLimit, true)
	return out, err
}

func parseResponseStats(p map[string]json.RawMessage) (ResponseStatsParams, error) {
	var out ResponseStatsParams
	var err error
	if out.Chat, err = required(p, "chat", MaxChatChars); err != nil {
		return out, err
	}
	out.Hours, err = coerce.Float(raw(p, "hours"), coerce.FloatSpec{Name: "hours", Default: DefaultStatsHours,
		Min: 0, MinExclusive: true, Max: MaxStatsHours, Clamp: true})
	if err != nil {
		return out, paramErr(err)
	}
	return out, nil
}

func parseContactsLookup(p map[string]json.RawMessage, role Role) (ContactsLookupParams, error) {
	name, err := required(p, "name", MaxQueryChars)
	return ContactsLookupParams{Name: name, Role: role}, err
}

// parseListChats applies protocol 1.2's table: days (0, 3650] default 365 and
// limit (0, 500] default 200, both validated, not capped; include_groups a
// JSON boolean (default true); query at most 100 characters, blank = none.
func parseListChats(p map[string]json.RawMessage) (ListChatsParams, error) {
	out := ListChatsParams{IncludeGroups: true}
	var err error
	if out.Days, err = days(p, DefaultListDays, MaxListChatsDays, false); err != nil {
		return out, err
	}
	if out.Limit, err = limit(p, DefaultListLimit, false); err != nil {
		return out, err
	}
	if r, ok := p["include_groups"]; ok {
		switch string(bytes.TrimSpace(r)) {
		case "true":
			out.IncludeGroups = true
		case "false":
			out.IncludeGroups = false
		default:
			return out, paramErrf("include_groups must be a JSON boolean (true or false)")
		}
	}
	q, _, err := str(p, "query", MaxQueryChars)
	if err != nil {
		return out, err
	}
	out.Query = strings.TrimSpace(q)
	return out, nil
}

// serviceParam reads send's service as a string ("" when omitted). Which
// values are accepted ("iMessage", "SMS", omitted = iMessage) is the send
// gate's rule, applied there with protocol 1.2's sentence.
func serviceParam(p map[string]json.RawMessage) (string, error) {
	s, _, err := str(p, "service", 40)
	return s, err
}

// sendFields reads to and text. Their content rules (length, control
// characters, group ids, blocklist) belong to the send gate, which reports
// them with protocol 1.2's messages; here they only have to be strings.
func sendFields(p map[string]json.RawMessage) (to, text, svc string, err error) {
	if to, err = required(p, "to", 320); err != nil {
		return
	}
	var ok bool
	if text, ok, err = str(p, "text", 0); err != nil {
		return
	}
	if !ok {
		err = paramErrf("text is required (a string of 1-4000 characters)")
		return
	}
	svc, err = serviceParam(p)
	return
}

func parseSendPreview(p map[string]json.RawMessage) (SendPreviewParams, error) {
	to, text, svc, err := sendFields(p)
	return SendPreviewParams{To: to, Text: text, Service: svc}, err
}

func parseSend(p map[string]json.RawMessage) (SendParams, error) {
	to, text, svc, err := sendFields(p)
	if err != nil {
		return SendParams{}, err
	}
	nonce, _, err := str(p, "send_nonce", 512)
	if err != nil {
		return SendParams{}, err
	}
	return SendParams{To: to, Text: text, Service: svc, Nonce: nonce}, nil
}
