package mcpserver

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestGetStatusDataSetNow: with DataSetNow, get_status reports the data
// set as it is at each call (data that appeared after start), not the
// value the setup hooks left in DataSet.
func TestGetStatusDataSetNow(t *testing.T) {
	var msgs atomic.Int64
	deps := &Deps{DataSet: DataSet{Kind: "personal", Empty: true, Note: "stale: set at start"},
		DataSetNow: func(context.Context) DataSet {
			if msgs.Load() == 0 {
				return DataSet{Kind: "personal", Empty: true, Note: "no messages yet"}
			}
			return DataSet{Kind: "personal"}
		}}
	if st := callStatus(t, deps, Filters{}); !st.DataSet.Empty || st.DataSet.Note != "no messages yet" {
		t.Errorf("before: %+v", st.DataSet)
	}
	msgs.Store(5)
	if st := callStatus(t, deps, Filters{}); st.DataSet.Empty || st.DataSet.Note != "" {
		t.Errorf("after data appeared: %+v", st.DataSet)
	}
	deps.DataSetNow = nil
	if st := callStatus(t, deps, Filters{}); st.DataSet.Note != "stale: set at start" {
		t.Errorf("without DataSetNow: %+v", st.DataSet)
	}
}
