//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type toyParams struct {
	Days  float64
	Query string
	Tags  []string
}

type toyResult struct {
	ID      string            `json:"id"` // would collide with the envelope if not nested
	OK      bool              `json:"ok"`
	When    time.Time         `json:"when"`
	Count   int64             `json:"count"`
	Names   []string          `json:"names"`
	Extra   map[string]string `json:"extra,omitempty"`
	Pointer *float64          `json:"pointer"`
}

func toyHandler(calls *int) Extension {
	return Handler("toy_action", true, func(ctx context.Context, b Backend, p toyParams) (toyResult, error) {
		*calls++
		if p.Query == "fail" {
			return toyResult{}, fmt.Errorf("no conversation matches %q: %w", p.Query, ErrNotFound)
		}
		f := p.Days * 2
		return toyResult{ID: "x1", OK: true, When: time.Date(2026, 8, 10, 14, 32, 15, 123456789, time.FixedZone("PDT", -7*3600)), // literal date: an encoding round trip, no clock
			Count: int64(len(p.Tags)), Names: append([]string{p.Query}, p.Tags...), Pointer: &f}, nil
	})
}

// TestForwardAnswersLikeAnInProcessCallOrRefuses: a typed value crosses the
// bridge unchanged, errors keep their sentence, and the action is refused
// where it must be (an extension the host does not offer, a 1.2 client,
// params of the wrong shape, a manager asking for a body-returning
// extension).
func TestForwardAnswersLikeAnInProcessCallOrRefuses(t *testing.T) {
	calls := 0
	h := newHarness(t, "", func(o *Options) { o.Extensions = []Extension{toyHandler(&calls)} })
	h.watching()
	c := NewClient(h.dir)
	defer c.Close()
	ctx := context.Background()
	p := toyParams{Days: 7.5, Query: "Angel", Tags: []string{"a", "b"}}
	got, err := Forward[toyResult](ctx, c, "toy_action", p)
	if err != nil {
		t.Fatal(err)
	}
	// In-process, the same call gives the same value: equal as JSON (what
	// every surface emits; a time zone's name is not part of it).
	local, _ := toyHandler(new(int)).Handle(ctx, nil, mustJSON(p))
	if g, l := mustJSON(got), mustJSON(local.(extResult[toyResult]).Result); string(g) != string(l) {
		t.Errorf("remote %s\nlocal  %s", g, l)
	}
	_, err = Forward[toyResult](ctx, c, "toy_action", toyParams{Query: "fail"})
	var re *RemoteError
	if !errors.As(err, &re) || re.Msg != `no conversation matches "fail": not found` || re.Code != CodeNotFound {
		t.Errorf("err = %#v", err)
	}
	if _, err := Forward[toyResult](ctx, c, "not_offered", p); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "does not offer") {
		t.Errorf("unknown extension: %v", err)
	}
	c12 := NewClient(h.dir)
	defer c12.Close()
	c12.Version = Version12
	if _, err := Forward[toyResult](ctx, c12, "toy_action", p); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a 1.2 client forwarded a 1.3 action: %v", err)
	}
	if calls != 2 {
		t.Errorf("handler calls = %d", calls)
	}
	// Params of the wrong shape are refused before the handler runs.
	if _, err := c.Call(ctx, "toy_action", map[string]any{"Days": "seven"}); !errors.As(err, &re) || re.Code != CodeInvalidParams {
		t.Errorf("bad params: %v", err)
	}
	// A manager never gets a body-returning extension.
	m := newHarness(t, "manager", func(o *Options) { o.Extensions = []Extension{toyHandler(&calls)} })
	m.watching()
	cm := NewClient(m.dir)
	defer cm.Close()
	if _, err := Forward[toyResult](ctx, cm, "toy_action", p); !errors.Is(err, ErrUnavailable) {
		t.Errorf("manager: %v", err)
	}
	if calls != 2 {
		t.Errorf("handler ran on a refused call")
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A service tool's action (ToolExtension) passes the call's arguments to
// the tool unchanged and returns its CallToolResult JSON under "result",
// isError answers included; a manager bridge never serves it, since a
// service tool may return content.
func TestToolExtensionForwardsArgumentsAndIsHostOnly(t *testing.T) {
	ctx := context.Background()
	calls := 0
	ext := ToolExtension("probe_store", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		calls++
		return json.RawMessage(`{"content":[{"type":"text","text":"echo ` + strings.ReplaceAll(string(args), `"`, `'`) + `"}],"isError":true}`), nil
	})
	h := newHarness(t, "", func(o *Options) { o.Extensions = []Extension{ext} })
	h.watching()
	c := NewClient(h.dir)
	defer c.Close()
	got, err := ForwardTool(ctx, c, "probe_store", json.RawMessage(`{"text":"hi","limit":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"text","text":"echo {'limit':5,'text':'hi'}"}],"isError":true}`; string(got) != want {
		t.Errorf("forwarded result = %s, want %s", got, want)
	}
	m := newHarness(t, "manager", func(o *Options) { o.Extensions = []Extension{ext} })
	m.watching()
	cm := NewClient(m.dir)
	defer cm.Close()
	if _, err := ForwardTool(ctx, cm, "probe_store", json.RawMessage(`{}`)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("manager: %v", err)
	}
	if calls != 1 {
		t.Errorf("tool calls = %d, want 1 (the manager's call must not run it)", calls)
	}
}
