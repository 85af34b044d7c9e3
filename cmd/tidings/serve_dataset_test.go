package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// TestLiveDataSet: the data set get_status reports, from the start value
// and the index as it is now.
func TestLiveDataSet(t *testing.T) {
	dir := t.TempDir()
	absent, present := filepath.Join(dir, "none.db"), filepath.Join(dir, "index.db")
	if err := os.WriteFile(present, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stale := mcpserver.DataSet{Kind: "personal", Empty: true, Note: "no messages were indexed when this server started"}
	demo := mcpserver.DataSet{Kind: "demo", Note: "the demo data set"}
	ix := func(st mcpserver.IndexStatus, err error) mcpserver.IndexStatusProvider {
		return mcpserver.IndexStatusFunc(func(context.Context) (mcpserver.IndexStatus, error) { return st, err })
	}
	for _, tc := range []struct {
		name      string
		start     mcpserver.DataSet
		ix        mcpserver.IndexStatusProvider
		file      string
		wantEmpty bool
		wantNote  string // substring; "-" = no note
	}{
		{"no index, none created", stale, nil, absent, true, "when this server started"},
		{"no index at start, created since", stale, nil, present, true, "created at " + present + " after this server started; restart"},
		{"first sync finished after start", stale, ix(mcpserver.IndexStatus{State: "ready", Messages: 12}, nil), present, false, "-"},
		{"first sync running", stale, ix(mcpserver.IndexStatus{State: "building"}, nil), present, true, "the first sync is running"},
		{"synced, nothing in it", stale, ix(mcpserver.IndexStatus{State: "ready"}, nil), present, true, "holds no messages"},
		{"index unreadable", stale, ix(mcpserver.IndexStatus{}, errors.New("database is locked")), present, true, "database is locked"},
		{"demo keeps its note", demo, ix(mcpserver.IndexStatus{State: "ready", Messages: 5}, nil), present, false, "the demo data set"},
		{"index emptied while running", mcpserver.DataSet{Kind: "personal"}, ix(mcpserver.IndexStatus{State: "ready"}, nil), present, true, "holds no messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := liveDataSet(context.Background(), tc.start, tc.ix, tc.file)
			if got.Kind != tc.start.Kind || got.Empty != tc.wantEmpty {
				t.Errorf("got %+v, want kind %s empty %v", got, tc.start.Kind, tc.wantEmpty)
			}
			if tc.wantNote == "-" && got.Note != "" || tc.wantNote != "-" && !strings.Contains(got.Note, tc.wantNote) {
				t.Errorf("note = %q, want %q", got.Note, tc.wantNote)
			}
		})
	}
}

// TestServeDataSetFollowsSync: a server started on a fresh home syncs its
// source in the background; once messages are in the index, get_status
// says the data set is not empty (it used to keep the value computed at
// start: "no messages were indexed when this server started").
func TestServeDataSetFollowsSync(t *testing.T) {
	data := demoData(t)
	s := startServe(t, map[string]string{"TIDINGS_NOW": anchorRFC3339}, "--imessage", data.ChatDB, "--contacts", data.Contacts)
	var st map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, _ = s.call("get_status", map[string]any{})
		if st["index"].(map[string]any)["messages"].(float64) > 0 && st["index"].(map[string]any)["state"] == "ready" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index never filled: %v", st["index"])
		}
	}
	ds := st["data_set"].(map[string]any)
	if ds["kind"] != "personal" || ds["empty"] != false || strings.Contains(fmt.Sprint(ds["note"]), "when this server started") {
		t.Errorf("data_set after the sync = %v", ds)
	}
}

// TestServeBridgeDataSetFollowsHelper: over the bridge, get_status asks the
// helper every time: not answering, answering before its index is open,
// and with its index synced.
func TestServeBridgeDataSetFollowsHelper(t *testing.T) {
	data := demoData(t)
	dir := filepath.Join(t.TempDir(), "bridge")
	now := anchorRFC3339
	s := startServe(t, map[string]string{"TIDINGS_NOW": now}, "--bridge", dir)
	st, _ := s.call("get_status", map[string]any{})
	if ds := st["data_set"].(map[string]any); ds["kind"] != "bridge" || ds["empty"] != true || !strings.Contains(fmt.Sprint(ds["note"]), "not answering") {
		t.Errorf("no helper yet: data_set = %v", ds)
	}
	startHelper(t, map[string]string{"TIDINGS_NOW": now, "DISPLAY": ""}, "--bridge-dir", dir, "--imessage", data.ChatDB, "--contacts", data.Contacts)
	waitBridge(t, dir)
	// The helper's 1.3 status reports its index without opening it.
	// A loaded machine (the whole suite in parallel) can make a helper
	// that just started miss one call's timeout: retry a few times.
	hs, err := bridgeCall(t, dir, "status")
	for try := 0; err != nil && try < 3; try++ {
		hs, err = bridgeCall(t, dir, "status")
	}
	if ix, _ := hs["index"].(map[string]any); err != nil || ix["state"] != "absent" {
		t.Errorf("helper status before any data request: %v %v", hs["index"], err)
	}
	if hs, _ := bridgeCall(t, dir, "status", "--protocol", "1.2"); hs["index"] != nil {
		t.Errorf("a 1.2 status carries the index: %v", hs)
	}
	// get_status gives the helper 5 s; under load, ask again before failing.
	var ds map[string]any
	for try := 0; try < 4; try++ {
		st, _ = s.call("get_status", map[string]any{})
		if ds = st["data_set"].(map[string]any); !strings.Contains(fmt.Sprint(ds["note"]), "not answering") {
			break
		}
	}
	if ds["empty"] != false || strings.Contains(fmt.Sprint(ds["note"]), "not answering") {
		t.Errorf("helper up: data_set = %v", ds)
	}
	if r, isErr := s.call("list_conversations", map[string]any{}); isErr || r["count"].(float64) == 0 {
		t.Fatalf("list_conversations over the bridge: %v", r)
	}
	st, _ = s.call("get_status", map[string]any{})
	ds, ix := st["data_set"].(map[string]any), st["index"].(map[string]any)
	if ds["empty"] != false || strings.Contains(fmt.Sprint(ds["note"]), "first question") || ix["messages"].(float64) == 0 {
		t.Errorf("index synced: data_set = %v, index = %v", ds, ix)
	}
}
