package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestBenchInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	m, out, errb := testMain(t, nil)
	for _, source := range []string{"synth", "demo"} {
		t.Run(source, func(t *testing.T) {
			out.Reset()
			err := m.Run(context.Background(), []string{"bench", "--messages", "3000", "--source", source, "--in-process", "--embedder", "hash", "--reps", "1", "--freshness", "3", "--dir", t.TempDir(), "--json"})
			if err != nil {
				t.Fatalf("bench: %v\n%s", err, errb)
			}
			checkBenchReport(t, out.Bytes())
		})
	}
	var ue usageError
	for _, args := range [][]string{{"bench", "--messages", "5"}, {"bench", "--embedder", "magic"}, {"bench", "--phase", "index"}, {"bench", "--source", "x"},
		{"bench", "--client", "--source", "synth"}, {"bench", "--client", "--calls", "0"}} {
		if err := m.Run(context.Background(), args); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func checkBenchReport(t *testing.T, b []byte) {
	t.Helper()
	var r BenchReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	if r.Index == nil || r.Search == nil || r.Freshness == nil || r.Status == nil {
		t.Fatalf("missing phases: %+v", r)
	}
	if r.Status.Messages < 2500 || r.Index.SizeBytes == 0 || r.Index.PeakRSSBytes == 0 || !r.Status.Vectors.Ready {
		t.Errorf("index phase: %+v status %+v", r.Index, r.Status)
	}
	for _, mode := range []string{"fulltext", "substring", "semantic", "hybrid"} {
		l, ok := r.Search.Modes[mode]
		if !ok || l.N == 0 || l.P50 <= 0 || l.P95 < l.P50 || l.FellBackMode != 0 {
			t.Errorf("%s: %+v", mode, l)
		}
	}
	if f := r.Freshness.Latency; f.N != 3 || f.P50 <= 0 {
		t.Errorf("freshness: %+v", f)
	}
}
