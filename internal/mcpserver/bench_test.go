package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkToolsCall measures the MCP tools/call round trip of a trivial
// tool (echo) through Tidings' whole server stack, one call at a time, and
// reports p50/p95 latency besides the mean:
//
//	go test ./internal/mcpserver -run '^$' -bench ToolsCall -benchtime 10000x
//
// stdio uses real OS pipes and raw JSON-RPC lines (so the figure is the
// server's overhead, not a client library's); http uses one keep-alive
// connection and the 2026-07-28 stateless POST /mcp path with its headers.
// legacy-http is the same call inside a 2025-11-25 session.
func BenchmarkToolsCall(b *testing.B) {
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"},%s}}`, id, modernMeta)
	}

	b.Run("stdio", func(b *testing.B) {
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		srv := testServer(b)
		done := make(chan error, 1)
		go func() { done <- ServeStdio(context.Background(), srv.SDK, inR, outW) }()
		rd := bufio.NewReaderSize(outR, 64<<10)
		roundTrip := func(id int) {
			if _, err := io.WriteString(inW, call(id)+"\n"); err != nil {
				b.Fatal(err)
			}
			line, err := rd.ReadBytes('\n')
			if err != nil || !bytes.Contains(line, []byte(`"ping"`)) {
				b.Fatalf("bad reply %q: %v", line, err)
			}
		}
		for i := range 200 { // warm up
			roundTrip(-1 - i)
		}
		measure(b, roundTrip)
		inW.Close()
		<-done
		outR.Close()
	})

	b.Run("http", func(b *testing.B) {
		ts := httptest.NewServer(NewHTTPHandler(testServer(b).SDK, HTTPOptions{}))
		defer ts.Close()
		client := ts.Client()
		roundTrip := func(id int) {
			req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(call(id)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "echo")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"ping"`)) {
				b.Fatalf("bad reply %d %q", resp.StatusCode, body)
			}
		}
		for i := range 200 {
			roundTrip(-1 - i)
		}
		measure(b, roundTrip)
	})

	b.Run("legacy-http", func(b *testing.B) {
		ts := httptest.NewServer(NewHTTPHandler(testServer(b).SDK, HTTPOptions{}))
		defer ts.Close()
		client := ts.Client()
		post := func(body string, h map[string]string) (*http.Response, []byte) {
			req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp, data
		}
		resp, _ := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
		h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		roundTrip := func(id int) {
			resp, body := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}`, id), h)
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"ping"`)) {
				b.Fatalf("bad reply %d %q", resp.StatusCode, body)
			}
		}
		for i := range 200 {
			roundTrip(1000000 + i)
		}
		measure(b, roundTrip)
	})
}

// measure runs b.N sequential round trips and reports p50/p95 in µs.
func measure(b *testing.B, roundTrip func(id int)) {
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		roundTrip(i + 1)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.95), "p95-µs")
}

// BenchmarkScreenMessage measures the screen in front of go-sdk (screen.go)
// on a typical tools/call line; compare with BenchmarkToolsCall/stdio:
//
//	go test ./internal/mcpserver -run '^$' -bench ScreenMessage
func BenchmarkScreenMessage(b *testing.B) {
	line := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"},%s}}`, modernMeta))
	b.ReportAllocs()
	for b.Loop() {
		if code, _ := screenMessage(line, false); code != 0 {
			b.Fatal(code)
		}
	}
}
