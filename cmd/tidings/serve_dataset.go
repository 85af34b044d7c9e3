package main

import (
	"context"
	"os"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// serveDataSet makes get_status' data_set follow the data while the server
// runs. The setup hooks decide at start what kind of data this process
// serves (demo or personal) and how it looked then; whether it is empty,
// and the note, are read again on every get_status from the index — a
// first sync that finishes after start, or an index built by `tidings
// index` while the server runs, is reported as it is. Bridge mode sets its
// own (serveBridge asks the helper).
func serveDataSet(_ context.Context, env *ServeEnv) error {
	if env.Config.Bridge != "" || env.Deps.DataSetNow != nil {
		return nil
	}
	d := env.Deps
	start := d.DataSet
	path := indexPath(env.Config)
	d.DataSetNow = func(ctx context.Context) mcpserver.DataSet { return liveDataSet(ctx, start, d.Index, path) }
	return nil
}

// liveDataSet is the data set now, given the one the hooks set at start,
// the index (nil when none was open at start) and the index's path.
func liveDataSet(ctx context.Context, start mcpserver.DataSet, ix mcpserver.IndexStatusProvider, indexFile string) mcpserver.DataSet {
	if ix == nil {
		if _, err := os.Stat(indexFile); err == nil && start.Empty {
			start.Note = "an index was created at " + indexFile + " after this server started; restart the server (your MCP client) to answer from it"
		}
		return start
	}
	ds := mcpserver.DataSet{Kind: start.Kind}
	st, err := ix.IndexStatus(ctx)
	switch {
	case err != nil:
		ds.Empty = true
		ds.Note = "the index cannot be read right now: " + err.Error()
	case st.Messages > 0:
		if !start.Empty {
			ds.Note = start.Note // e.g. what the demo data is
		}
	case st.State == "building":
		ds.Empty = true
		ds.Note = "the first sync is running: messages appear as it goes (see index); " + howToGetData
	default:
		ds.Empty = true
		ds.Note = "the index holds no messages: " + howToGetData
	}
	return ds
}
