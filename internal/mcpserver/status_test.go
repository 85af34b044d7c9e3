package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

type fakeIndex struct {
	st  IndexStatus
	err error
}

func (f fakeIndex) IndexStatus(context.Context) (IndexStatus, error) { return f.st, f.err }

func callStatus(t *testing.T, deps *Deps, f Filters) StatusOutput {
	t.Helper()
	srv, err := New(deps, f)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_status: %v %+v", err, res)
	}
	var out StatusOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	// The text block carries the same JSON for clients that ignore
	// structuredContent.
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || !json.Valid([]byte(tc.Text)) || !strings.Contains(tc.Text, `"data_set"`) {
		t.Errorf("text content = %+v", res.Content)
	}
	return out
}

func TestGetStatusEmptyDemo(t *testing.T) {
	now := testclock.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	cfg := &config.Config{NowRaw: now.Format(time.RFC3339), Now: func() time.Time { return now }}
	deps := &Deps{Config: cfg, Version: "1.2.3", Transport: "stdio",
		DataSet: DataSet{Kind: "demo", Empty: true, Note: "the demo data set is empty"}}
	st := callStatus(t, deps, Filters{ReadOnly: true})
	if st.Server.Version != "1.2.3" || st.Server.Transport != "stdio" || st.Server.Name != "tidings" {
		t.Errorf("server = %+v", st.Server)
	}
	if !st.DataSet.Empty || st.DataSet.Kind != "demo" || st.DataSet.Note == "" {
		t.Errorf("data_set = %+v", st.DataSet)
	}
	if st.Now != testclock.Text(time.RFC3339, "2026-11-30T09:00:00Z") || st.ClockNote == "" {
		t.Errorf("now = %q note %q", st.Now, st.ClockNote)
	}
	if strings.Join(st.Protocol.Modern, ",") != "2026-07-28" || len(st.Protocol.Legacy) != 4 {
		t.Errorf("protocol = %+v", st.Protocol)
	}
	if !st.Access.ReadOnly || st.Access.SendEnabled {
		t.Errorf("access = %+v", st.Access)
	}
	if len(st.Toolsets) == 0 || st.Toolsets[0].Name != ToolsetStatus || !st.Toolsets[0].Enabled {
		t.Errorf("toolsets = %+v", st.Toolsets)
	}
	if st.Index.State != "absent" || st.Index.Note == "" {
		t.Errorf("index = %+v", st.Index)
	}
	if st.Sources == nil || st.Checks == nil {
		t.Error("nil lists in status")
	}
}

func TestGetStatusProviders(t *testing.T) {
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.db")
	os.WriteFile(chat, []byte("x"), 0o600)
	cfg := &config.Config{IMessage: chat, AndroidXML: []string{filepath.Join(dir, "missing.xml")}, Now: time.Now}
	last := testclock.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	deps := &Deps{Config: cfg,
		Index: fakeIndex{st: IndexStatus{State: "ready", Messages: 42, LastSync: &last}},
		Checks: func(context.Context) []CheckResult {
			return []CheckResult{{Name: "chat.db readable", Status: "ok"}}
		},
	}
	st := callStatus(t, deps, Filters{})
	if len(st.Sources) != 2 || !st.Sources[0].Found || st.Sources[0].Kind != "imessage" || st.Sources[1].Found || st.Sources[1].Detail != "not found" {
		t.Errorf("sources = %+v", st.Sources)
	}
	if st.Index.State != "ready" || st.Index.Messages != 42 || !st.Index.LastSync.Equal(last) {
		t.Errorf("index = %+v", st.Index)
	}
	if len(st.Checks) != 1 || st.Checks[0].Status != "ok" {
		t.Errorf("checks = %+v", st.Checks)
	}

	deps = &Deps{Config: cfg, Index: IndexStatusFunc(func(context.Context) (IndexStatus, error) {
		return IndexStatus{}, errors.New("database is locked")
	}), Sources: SourceStatusFunc(func(context.Context) []SourceStatus {
		return []SourceStatus{{Kind: "android_xml", Path: "/x.xml", Found: true, Detail: "file"}}
	})}
	st = callStatus(t, deps, Filters{})
	if st.Index.State != "error" || !strings.Contains(st.Index.Note, "database is locked") {
		t.Errorf("index error not reported: %+v", st.Index)
	}
	if len(st.Sources) != 1 || st.Sources[0].Path != "/x.xml" {
		t.Errorf("custom source provider ignored: %+v", st.Sources)
	}
}

func TestStatusSourcePermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "chat.db")
	os.WriteFile(p, []byte("x"), 0o000)
	st := statSource("imessage", p)
	if !st.Found || !strings.Contains(st.Detail, "Full Disk Access") {
		t.Errorf("unreadable source: %+v", st)
	}
}

// TestCutFitsTheBudgetAndPagesTheRest: Cut keeps as many items as fit in
// MaxResultBytes less the reserve and says so in the page (truncated,
// counts, a cursor, a note); a short list is not cut, and a single item too
// big for the budget is still returned.
func TestCutFitsTheBudgetAndPagesTheRest(t *testing.T) {
	type item struct {
		Body string `json:"body"`
	}
	items := make([]item, 100)
	for i := range items {
		items[i].Body = strings.Repeat("a", 1000)
	}
	kept, page, err := Cut(items, 500, func(i int) string { return "c" + string(rune('0'+i%10)) })
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(kept)
	if len(b)+500 > MaxResultBytes {
		t.Errorf("kept %d bytes + reserve, over budget %d", len(b), MaxResultBytes)
	}
	if !page.Truncated || page.Returned != len(kept) || page.Total != 100 || page.NextCursor == "" || !strings.Contains(page.Note, "of 100") {
		t.Errorf("page = %+v", page)
	}
	if len(kept) < 30 {
		t.Errorf("kept only %d items", len(kept))
	}
	kept, page, _ = Cut(items[:3], 0, nil)
	if len(kept) != 3 || page.Truncated {
		t.Errorf("small list cut: %d %+v", len(kept), page)
	}
	huge := []item{{Body: strings.Repeat("b", MaxResultBytes*2)}}
	if kept, _, _ := Cut(huge, 0, nil); len(kept) != 1 {
		t.Error("a single oversize item must still be returned")
	}
}
