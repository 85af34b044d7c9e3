package coerce

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

var (
	limitSpec    = IntSpec{Name: "limit", Default: 20, Min: 1, Max: 200, Clamp: true}
	strictLimit  = IntSpec{Name: "limit", Default: 200, Min: 1, Max: 500} // list_chats: (0, 500]
	reviewDays   = DaysSpec{Name: "days", Default: 2, Max: 90, Clamp: true}
	listChatDays = DaysSpec{Name: "days", Default: 365, Max: 3650}
)

// adversarial is the table every numeric parameter is run against, as JSON
// text (the form a tool call delivers).
var adversarial = []string{
	`-1`, `0`, `1`, `1e308`, `"50"`, `"nan"`, `"inf"`, `9223372036854775808`, `"9223372036854775808"`,
	`"9999-12-31"`, `9956`, `5.5`, `true`, `null`, `""`, `{}`,
	`5.0`, `" 7 "`, `"-inf"`, `"Infinity"`, `"NaN"`, `[]`, `[5]`, `"0x10"`, `"1_000"`, `"1e2"`, `-0`,
	`1e400`, `"1e400"`, `-9007199254740993`, `9007199254740992`, `"+5"`, `"5."`, `".5"`, `"5 5"`,
}

type outcome struct {
	val     float64
	clamped bool
	errSub  string // "" = success
}

func TestIntTable(t *testing.T) {
	want := map[string]outcome{
		`-1`:                    {errSub: "limit must be an integer from 1 to 200 (got -1)"},
		`0`:                     {errSub: "(got 0)"},
		`1`:                     {val: 1},
		`1e308`:                 {errSub: "far out of range"},
		`"50"`:                  {val: 50},
		`"nan"`:                 {errSub: `(got "nan", which is not a finite number)`},
		`"inf"`:                 {errSub: "not a finite number"},
		`9223372036854775808`:   {errSub: "far out of range"},
		`"9223372036854775808"`: {errSub: "far out of range"},
		`"9999-12-31"`:          {errSub: `(got "9999-12-31", which is not a number)`},
		`9956`:                  {val: 200, clamped: true},
		`5.5`:                   {errSub: "not a whole number"},
		`true`:                  {errSub: "(got a boolean)"},
		`null`:                  {val: 20},
		`""`:                    {val: 20},
		`{}`:                    {errSub: "(got an object)"},
		`5.0`:                   {val: 5},
		`" 7 "`:                 {val: 7},
		`"-inf"`:                {errSub: "not a finite number"},
		`"Infinity"`:            {errSub: "not a finite number"},
		`"NaN"`:                 {errSub: "not a finite number"},
		`[]`:                    {errSub: "(got a list)"},
		`[5]`:                   {errSub: "(got a list)"},
		`"0x10"`:                {errSub: "not a number"},
		`"1_000"`:               {errSub: "not a number"},
		`"1e2"`:                 {val: 100},
		`-0`:                    {errSub: "(got -0)"},
		`1e400`:                 {errSub: "far out of range"},
		`"1e400"`:               {errSub: "far out of range"},
		`-9007199254740993`:     {errSub: "limit must be an integer from 1 to 200 (got "}, // text lost in the "any" form; see TestMagnitudeAbove2Pow53Refused,
		`9007199254740992`:      {val: 200, clamped: true},
		`"+5"`:                  {val: 5},
		`"5."`:                  {val: 5},
		`".5"`:                  {errSub: "not a whole number"},
		`"5 5"`:                 {errSub: "not a number"},
	}
	runIntTable(t, limitSpec, want)
}

func TestStrictIntRejectsAboveMax(t *testing.T) {
	for _, in := range []string{`501`, `9956`, `"1000"`} {
		_, _, err := strictLimit.Parse(NumberJSON(in))
		if err == nil || !strings.Contains(err.Error(), "limit must be an integer from 1 to 500") {
			t.Errorf("Parse(%s) error = %v, want a range error", in, err)
		}
	}
	if n, _, err := strictLimit.Parse(NumberJSON(`500`)); err != nil || n != 500 {
		t.Errorf("Parse(500) = %d, %v", n, err)
	}
}

func runIntTable(t *testing.T, spec IntSpec, want map[string]outcome) {
	t.Helper()
	for _, in := range adversarial {
		w, ok := want[in]
		if !ok {
			t.Fatalf("no expectation for %s", in)
		}
		t.Run(in, func(t *testing.T) {
			for form, v := range forms(t, in) {
				n, clamped, err := spec.Parse(v)
				check(t, form, in, float64(n), clamped, err, w)
			}
		})
	}
}

// forms returns the JSON text as the three shapes a handler may hold: a
// Number field, a value decoded into any (map[string]any arguments), and
// json.RawMessage.
func forms(t *testing.T, text string) map[string]any {
	t.Helper()
	var n Number
	if err := json.Unmarshal([]byte(text), &n); err != nil {
		t.Fatalf("Number unmarshal %s: %v", text, err)
	}
	var st struct {
		Limit Number `json:"limit,omitzero"`
	}
	if err := json.Unmarshal([]byte(`{"limit":`+text+`}`), &st); err != nil {
		t.Fatalf("struct unmarshal %s: %v", text, err)
	}
	out := map[string]any{"Number": n, "*Number": &n, "struct field": st.Limit, "RawMessage": json.RawMessage(text)}
	var a any
	if err := json.Unmarshal([]byte(text), &a); err == nil {
		out["any"] = a
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var an any
	if err := d.Decode(&an); err == nil {
		out["any (UseNumber)"] = an
	}
	return out
}

func check(t *testing.T, form, in string, got float64, clamped bool, err error, w outcome) {
	t.Helper()
	if w.errSub != "" {
		if err == nil {
			t.Errorf("%s %s: got %v, want error containing %q", form, in, got, w.errSub)
			return
		}
		if !strings.Contains(err.Error(), w.errSub) {
			t.Errorf("%s %s: error %q, want it to contain %q", form, in, err, w.errSub)
		}
		msg := err.Error()
		if strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, "limit ") && !strings.HasPrefix(msg, "days ") {
			t.Errorf("%s %s: error %q is not one sentence naming the parameter", form, in, msg)
		}
		return
	}
	if err != nil {
		t.Errorf("%s %s: unexpected error %v", form, in, err)
		return
	}
	if got != w.val || clamped != w.clamped {
		t.Errorf("%s %s: got %v (clamped %v), want %v (clamped %v)", form, in, got, clamped, w.val, w.clamped)
	}
}

func TestDaysTable(t *testing.T) {
	common := map[string]outcome{
		`-1`: {errSub: "days must be a number greater than 0 and at most"}, `0`: {errSub: "(got 0)"},
		`1`: {val: 1}, `1e308`: {errSub: "far out of range"}, `"50"`: {val: 50},
		`"nan"`: {errSub: "not a finite number"}, `"inf"`: {errSub: "not a finite number"},
		`9223372036854775808`: {errSub: "far out of range"}, `"9223372036854775808"`: {errSub: "far out of range"},
		`"9999-12-31"`: {errSub: "not a number"}, `5.5`: {val: 5.5}, `true`: {errSub: "a boolean"},
		`{}`: {errSub: "an object"}, `5.0`: {val: 5}, `" 7 "`: {val: 7}, `"-inf"`: {errSub: "not a finite"},
		`"Infinity"`: {errSub: "not a finite"}, `"NaN"`: {errSub: "not a finite"}, `[]`: {errSub: "a list"},
		`[5]`: {errSub: "a list"}, `"0x10"`: {errSub: "not a number"}, `"1_000"`: {errSub: "not a number"},
		`"1e2"`: {val: 100}, `-0`: {errSub: "(got -0)"}, `1e400`: {errSub: "far out of range"},
		`"1e400"`: {errSub: "far out of range"}, `-9007199254740993`: {errSub: "days must be a number greater than 0 and at most"},
		`"+5"`: {val: 5}, `"5."`: {val: 5}, `".5"`: {val: 0.5}, `"5 5"`: {errSub: "not a number"},
	}
	cases := []struct {
		spec      DaysSpec
		overrides map[string]outcome
	}{
		{reviewDays, map[string]outcome{
			`null`: {val: 2}, `""`: {val: 2}, `9956`: {val: 90, clamped: true},
			`"1e2"`: {val: 90, clamped: true}, `9007199254740992`: {val: 90, clamped: true},
		}},
		{listChatDays, map[string]outcome{
			`null`: {val: 365}, `""`: {val: 365}, `9956`: {errSub: "days must be a number greater than 0 and at most 3650 (got 9956)"},
			`9007199254740992`: {errSub: "at most 3650"},
		}},
	}
	for _, c := range cases {
		want := map[string]outcome{}
		for k, v := range common {
			want[k] = v
		}
		for k, v := range c.overrides {
			want[k] = v
		}
		for _, in := range adversarial {
			w, ok := want[in]
			if !ok {
				t.Fatalf("no expectation for %s", in)
			}
			for form, v := range forms(t, in) {
				got, clamped, err := c.spec.Parse(v)
				check(t, form, in, got, clamped, err, w)
			}
		}
	}
}

func TestGoValues(t *testing.T) {
	tests := []struct {
		v    any
		want int
		err  bool
	}{
		{int(5), 5, false},
		{int64(math.MaxInt64), 0, true},
		{int64(math.MinInt64), 0, true},
		{uint64(math.MaxUint64), 0, true},
		{uint8(7), 7, false},
		{int32(-3), 0, true},
		{float32(2), 2, false},
		// Every width of the Go number types reads the same way.
		{int8(4), 4, false},
		{int16(300), 200, false},
		{int32(6), 6, false},
		{int64(8), 8, false},
		{uint(9), 9, false},
		{uint16(10), 10, false},
		{uint32(11), 11, false},
		{uint64(12), 12, false},
		{float32(2.5), 0, true},
		{float64(13), 13, false},
		{math.NaN(), 0, true},
		{math.Inf(1), 0, true},
		{math.Inf(-1), 0, true},
		{float64(1 << 62), 0, true},
		{[]int{1}, 0, true},
		{map[string]any{}, 0, true},
		{struct{}{}, 0, true},
		{(*Number)(nil), 20, false},
		{json.Number("12"), 12, false},
		{json.Number("nan"), 0, true},
		{complex(1, 2), 0, true},
	}
	for _, tt := range tests {
		got, err := Int(tt.v, limitSpec)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Int(%#v) = %d, %v; want %d, err %v", tt.v, got, err, tt.want, tt.err)
		}
	}
}

// TestMissingRequiredValueIsRefused: a required parameter that is absent,
// null, an empty string or unset is refused with "<name> is required", never
// defaulted.
func TestMissingRequiredValueIsRefused(t *testing.T) {
	spec := IntSpec{Name: "message_id", Min: 1, Max: math.MaxInt32, Required: true}
	for _, v := range []any{nil, NumberJSON("null"), NumberJSON(`""`), Number{}} {
		if _, err := Int(v, spec); err == nil || !strings.HasPrefix(err.Error(), "message_id is required") {
			t.Errorf("Int(%#v) error = %v, want required", v, err)
		}
	}
	if _, err := Days(nil, DaysSpec{Name: "days", Max: 90, Required: true}); err == nil {
		t.Error("Days(nil) with Required: want an error")
	}
}

func TestFloatBounds(t *testing.T) {
	hours := FloatSpec{Name: "hours", Default: 24, Min: 1, Max: 24 * 90}
	for _, tt := range []struct {
		in   string
		want float64
		err  bool
	}{{`1`, 1, false}, {`0.5`, 0, true}, {`2160`, 2160, false}, {`2161`, 0, true}, {`"12.5"`, 12.5, false}} {
		got, err := Float(NumberJSON(tt.in), hours)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Float(%s) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	if _, err := Float(1, FloatSpec{Name: "x", Min: 2, Max: 1}); err == nil {
		t.Error("empty range: want an error")
	}
	if _, err := Int(1, IntSpec{Name: "x", Min: 2, Max: 1}); err == nil {
		t.Error("empty int range: want an error")
	}
}

func TestErrorEchoIsBounded(t *testing.T) {
	long := `"` + strings.Repeat("é", 500) + `"`
	_, err := Int(NumberJSON(long), limitSpec)
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("error = %v; want a short error", err)
	}
}

func TestNumberRoundTrip(t *testing.T) {
	for _, in := range []string{`5`, `"50"`, `5.5`, `null`, `{"a":1}`} {
		n := NumberJSON(in)
		b, err := json.Marshal(n)
		if err != nil || string(b) != in {
			t.Errorf("Marshal(NumberJSON(%s)) = %s, %v", in, b, err)
		}
	}
	if !(Number{}).IsZero() || NumberJSON("5").IsZero() {
		t.Error("IsZero wrong")
	}
	if NumberJSON("null").Given() || !NumberJSON("0").Given() {
		t.Error("Given wrong")
	}
	if n, err := Int(NumberOf(42), limitSpec); err != nil || n != 42 {
		t.Errorf("NumberOf(42) = %d, %v", n, err)
	}
	b, _ := json.Marshal(struct {
		L Number `json:"limit,omitzero"`
	}{})
	if string(b) != `{}` {
		t.Errorf("omitzero: got %s", b)
	}
}

func FuzzInt(f *testing.F) {
	for _, s := range adversarial {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, clamped, err := limitSpec.Parse(NumberJSON(text))
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "limit ") {
				t.Fatalf("error %q is not one sentence naming the parameter", err)
			}
			return
		}
		if n < limitSpec.Min || n > limitSpec.Max {
			t.Fatalf("Parse(%q) = %d outside [1, 200]", text, n)
		}
		if clamped && n != limitSpec.Max {
			t.Fatalf("clamped to %d", n)
		}
		d, _, err := reviewDays.Parse(NumberJSON(text))
		if err == nil && (d <= 0 || d > 90 || math.IsNaN(d)) {
			t.Fatalf("Days(%q) = %v outside (0, 90]", text, d)
		}
	})
}

// TestMagnitudeAbove2Pow53Refused: 2^53+1 rounds to 2^53 as a double, so a
// check on the parsed float alone lets it through; the package promise (no
// magnitude above 2^53, docs/bridge.md) is kept on the text as written, for
// every form the value can arrive in.
func TestMagnitudeAbove2Pow53Refused(t *testing.T) {
	wide := IntSpec{Name: "offset", Min: -(1 << 62), Max: 1 << 62}
	bridge := FloatSpec{Name: "amount", Min: -MaxMagnitude, Max: MaxMagnitude}
	tests := []struct {
		name string
		in   any
		ok   bool
	}{
		{"JSON number 2^53+1", NumberJSON(`9007199254740993`), false},
		{"JSON real 2^53+1", NumberJSON(`9007199254740993.0`), false},
		{"JSON string 2^53+1", NumberJSON(`"9007199254740993"`), false},
		{"JSON string real 2^53+1", NumberJSON(`"9007199254740993.0"`), false},
		{"JSON number 2^53+0.5", NumberJSON(`9007199254740992.5`), false},
		{"JSON number just above 2^53", NumberJSON(`9007199254740992.0000001`), false},
		{"JSON exponent 2^53+1", NumberJSON(`9.007199254740993e15`), false},
		{"JSON number -(2^53+1)", NumberJSON(`-9007199254740993`), false},
		{"JSON string -(2^53+1)", NumberJSON(`"-9007199254740993"`), false},
		{"raw message 2^53+1", json.RawMessage(`9007199254740993`), false},
		{"json.Number 2^53+1", json.Number("9007199254740993"), false},
		{"Go string 2^53+1", "9007199254740993", false},
		{"Go int64 2^53+1", int64(1<<53 + 1), false},
		{"JSON number 2^53", NumberJSON(`9007199254740992`), true},
		{"JSON real 2^53", NumberJSON(`9007199254740992.000`), true},
		{"JSON string 2^53", NumberJSON(`"9007199254740992"`), true},
		{"JSON exponent 2^53", NumberJSON(`9.007199254740992e15`), true},
		{"JSON number -2^53", NumberJSON(`-9007199254740992`), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, errI := Int(tc.in, wide)
			f, errF := Float(tc.in, bridge)
			if tc.ok {
				if errI != nil || errF != nil {
					t.Fatalf("refused: %v / %v", errI, errF)
				}
				if math.Abs(float64(n)) != MaxMagnitude || math.Abs(f) != MaxMagnitude {
					t.Errorf("got %d / %g, want ±2^53", n, f)
				}
				return
			}
			for name, err := range map[string]error{"offset": errI, "amount": errF} {
				if err == nil {
					t.Fatalf("%s accepted %v", name, tc.in)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, name+" must be ") || !strings.Contains(msg, "far out of range") || strings.Count(msg, ". ") > 0 {
					t.Errorf("error is not one sentence naming %s: %q", name, msg)
				}
			}
		})
	}
}
