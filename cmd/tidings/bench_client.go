package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/index"
)

// The client phase of `tidings bench --client` (docs/benchmarks.md,
// "Search as the client sees it"): the demo data set is indexed by the real
// `tidings index`, then `tidings serve` runs as a subprocess and go-sdk's
// MCP client drives it over stdio, timing each tools/call from the
// request to the decoded answer, as an assistant's client does. Only the
// latency a client sees counts towards the search budget (p50 ≤ 5 ms,
// p95 ≤ 25 ms at 1M messages).

// BenchClient is the client phase's report.
type BenchClient struct {
	// Index is the `tidings index` run that built the served index (nil
	// when the index of an earlier run was reused).
	Index *BenchClientIndex `json:"index,omitempty"`
	// Messages is the number of messages the served index holds.
	Messages int64 `json:"messages"`
	// Now is the server's pinned clock (TIDINGS_NOW): the newest message.
	Now time.Time `json:"now"`
	// Calls is the number of timed calls per tool, after the warm-up.
	Calls int `json:"calls"`
	// Tools are the figures per workload, in Workloads order.
	Tools []BenchTool `json:"tools"`
	// Profile is where the in-process profile of the server side was
	// written (--client-cpuprofile), with the latencies of that pass.
	Profile      string      `json:"profile,omitempty"`
	ProfileTools []BenchTool `json:"profile_tools,omitempty"`
	// ServerPeakRSSBytes is the serve process's peak RSS.
	ServerPeakRSSBytes int64 `json:"server_peak_rss_bytes"`
	// LoadBefore and LoadAfter are /proc/loadavg's three figures around
	// the timed calls: the machine is shared, so every figure says how busy
	// it was.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
}

// BenchClientIndex is the `tidings index` run the client phase made.
type BenchClientIndex struct {
	Seconds      float64 `json:"seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	Load         string  `json:"load,omitempty"`
}

// BenchTool is one workload's latencies as the client measured them.
type BenchTool struct {
	Name string `json:"name"`
	BenchLatency
	// ServerCPUMean is the serve process's CPU time per call (user +
	// system, from /proc): on a loaded machine it estimates what a call
	// costs the server alone.
	ServerCPUMean float64 `json:"server_cpu_mean_ms,omitempty"`
	// ResultBytes is the mean size of the answer's JSON text block.
	ResultBytes int `json:"result_bytes"`
}

// benchWorkload is one timed tool call pattern: call i of the run uses
// args(i).
type benchWorkload struct {
	name   string
	tool   string
	warmup int
	args   func(i int) map[string]any
}

// benchWorkloads are the client phase's calls: generic hybrid searches
// (the search phase's query set, round robin), 50-message pages of the
// busiest conversations, and a 7-day review.
func benchWorkloads(convs []string) []benchWorkload {
	return []benchWorkload{
		{name: "search_messages hybrid", tool: "search_messages", warmup: len(benchQueries), args: func(i int) map[string]any {
			return map[string]any{"query": benchQueries[i%len(benchQueries)], "mode": "hybrid", "limit": 10}
		}},
		{name: "get_conversation_messages 50", tool: "get_conversation_messages", warmup: len(convs), args: func(i int) map[string]any {
			return map[string]any{"conversation_id": convs[i%len(convs)], "limit": 50}
		}},
		{name: "review_messages 7d", tool: "review_messages", warmup: 3, args: func(int) map[string]any {
			return map[string]any{"days": 7}
		}},
	}
}

// benchClientHome is the Tidings home the client phase serves from.
func benchClientHome(o benchOpts) string { return filepath.Join(o.dir, "home") }

// benchClientPhase runs the client phase (see BenchClient).
func benchClientPhase(ctx context.Context, o benchOpts) (*BenchClient, error) {
	chatDB, _, err := demoChatDB(ctx, o)
	if err != nil {
		return nil, err
	}
	vcf := filepath.Join(filepath.Dir(chatDB), "contacts.vcf")
	home := benchClientHome(o)
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	rep := &BenchClient{Calls: max(o.calls, 1)}
	if _, err := os.Stat(filepath.Join(home, "index.db")); err != nil {
		if rep.Index, err = benchRunIndex(ctx, exe, home, chatDB, vcf); err != nil {
			return nil, err
		}
	}
	ix, err := index.Open(ctx, filepath.Join(home, "index.db"), index.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	st, err := ix.Status(ctx)
	ix.Close()
	if err != nil {
		return nil, err
	}
	rep.Messages, rep.Now = st.Messages, st.NewestMessage.UTC()
	// The server serves the index with the contacts but without the
	// message source: the watcher's first full sync would run during the
	// measurement, and between changes it only stats chat.db every 2 s.
	args := []string{"serve", "--home", home, "--contacts", vcf, "--log-level", "warn"}
	env := []string{"TIDINGS_NOW=" + rep.Now.Format(time.RFC3339Nano)}

	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tidings-bench", Version: Version}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start tidings serve: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	pid := cmd.Process.Pid
	tools, err := benchDrive(ctx, cs, rep.Calls, func() float64 { return procCPUSeconds(pid) }, rep, nil)
	cs.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	rep.Tools = tools
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rep.ServerPeakRSSBytes = maxRSSBytes(ru)
		}
	}
	if o.clientProfile != "" {
		rep.Profile = o.clientProfile
		if rep.ProfileTools, err = benchClientInProcess(ctx, o.clientProfile, rep.Calls, append([]string(nil), args...), env); err != nil {
			return nil, fmt.Errorf("in-process pass: %w", err)
		}
	}
	return rep, nil
}

// benchRunIndex builds the home's index with the real `tidings index`
// (a process of its own, so its time, CPU and memory are its own).
func benchRunIndex(ctx context.Context, exe, home, chatDB, vcf string) (*BenchClientIndex, error) {
	cmd := exec.CommandContext(ctx, exe, "index", "--home", home, "--imessage", chatDB, "--contacts", vcf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	load := loadAverage()
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("tidings index: %w: %s", err, strings.TrimSpace(out.String()))
	}
	r := &BenchClientIndex{Seconds: time.Since(t0).Seconds(), Load: load + " → " + loadAverage()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
		r.CPUSeconds, r.PeakRSSBytes = tv(ru.Utime)+tv(ru.Stime), maxRSSBytes(ru)
	}
	return r, nil
}

// benchDrive warms the server up and times the workloads. serverCPU reads
// the server's CPU seconds (nil: not known); timed, when not nil, is called
// with the tool's name before a workload's timed calls and the function it
// returns after them.
func benchDrive(ctx context.Context, cs *mcp.ClientSession, calls int, serverCPU func() float64, rep *BenchClient, timed func(tool string) (func(), error)) ([]BenchTool, error) {
	convs, err := benchConversations(ctx, cs)
	if err != nil {
		return nil, err
	}
	wls := benchWorkloads(convs)
	for _, w := range wls {
		for i := range w.warmup {
			if _, err := benchCall(ctx, cs, w.tool, w.args(i)); err != nil {
				return nil, err
			}
		}
	}
	if rep != nil {
		rep.LoadBefore = loadAverage()
	}
	var out []BenchTool
	for _, w := range wls {
		stop := func() {}
		if timed != nil {
			if stop, err = timed(w.tool); err != nil {
				return nil, err
			}
		}
		lat := make([]time.Duration, 0, calls)
		var size int
		c0 := 0.0
		if serverCPU != nil {
			c0 = serverCPU()
		}
		for i := range calls {
			t := time.Now()
			n, err := benchCall(ctx, cs, w.tool, w.args(i))
			if err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t))
			size += n
		}
		stop()
		bt := BenchTool{Name: w.name, BenchLatency: summarize(lat, BenchLatency{}), ResultBytes: size / calls}
		if serverCPU != nil {
			bt.ServerCPUMean = 1000 * (serverCPU() - c0) / float64(calls)
		}
		out = append(out, bt)
	}
	if rep != nil {
		rep.LoadAfter = loadAverage()
	}
	return out, nil
}

// benchConversations returns the ids of up to 10 conversations, busiest
// first, for the history pages.
func benchConversations(ctx context.Context, cs *mcp.ClientSession) ([]string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_conversations", Arguments: map[string]any{"limit": 50}})
	if err != nil {
		return nil, fmt.Errorf("list_conversations: %w", err)
	}
	var out struct {
		Conversations []struct {
			ID       string `json:"id"`
			Messages int    `json:"message_count"`
		} `json:"conversations"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || res.IsError {
		return nil, fmt.Errorf("list_conversations: unexpected answer %.200s", b)
	}
	convs := out.Conversations
	// Busiest first: a full 50-message page is what is measured.
	for i := 1; i < len(convs); i++ {
		for j := i; j > 0 && convs[j].Messages > convs[j-1].Messages; j-- {
			convs[j], convs[j-1] = convs[j-1], convs[j]
		}
	}
	var ids []string
	for _, c := range convs[:min(10, len(convs))] {
		ids = append(ids, c.ID)
	}
	if len(ids) == 0 {
		return nil, errors.New("list_conversations: no conversation in the served data")
	}
	return ids, nil
}

// benchCall makes one tools/call and returns the size of its text block;
// an error result is an error (the bench measures answers, not refusals).
func benchCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (int, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", tool, err)
	}
	n := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
			if res.IsError {
				return 0, fmt.Errorf("%s %v: error result: %s", tool, args, tc.Text)
			}
		}
	}
	if res.IsError {
		return 0, fmt.Errorf("%s %v: error result", tool, args)
	}
	return n, nil
}

// benchClientInProcess runs the same workloads against `tidings serve`
// running in this process (Main.Run on OS pipes, so the stdio transport
// is the real one) and writes a CPU profile of each workload's timed calls
// to profile.<tool> (search_messages, …). The
// server's goroutines carry the profile label side=server and the
// client's side=client, so `go tool pprof -tagfocus side=server` shows the
// server's share alone.
func benchClientInProcess(ctx context.Context, profile string, calls int, args, env []string) ([]BenchTool, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	m := &Main{Stdin: inR, Stdout: outW, Stderr: io.Discard, Getenv: func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}}
	done := make(chan error, 1)
	pprof.Do(ctx, pprof.Labels("side", "server"), func(ctx context.Context) {
		go func() {
			err := m.Run(ctx, args)
			outW.Close()
			inR.Close()
			done <- err
		}()
	})
	var tools []BenchTool
	pprof.Do(ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
		var cs *mcp.ClientSession
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "tidings-bench", Version: Version}, nil).
			Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
		if err != nil {
			return
		}
		defer cs.Close()
		tools, err = benchDrive(ctx, cs, calls, nil, nil, func(tool string) (func(), error) { return startCPUProfile(profile + "." + tool) })
	})
	inW.Close()
	if serr := <-done; err == nil && serr != nil {
		err = serr
	}
	outR.Close()
	return tools, err
}

// procCPUSeconds returns a process's user + system CPU seconds from
// /proc (Linux; 0 elsewhere).
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: utime and stime are fields 14 and 15 of the line.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	var ut, st float64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// loadAverage returns /proc/loadavg's 1, 5 and 15 minute figures ("" when
// unknown).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// maxRSSBytes reads a child's peak RSS from its rusage.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

// cpuModel names the processor (Linux; the architecture elsewhere).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func printBenchClient(w io.Writer, c *BenchClient) {
	if x := c.Index; x != nil {
		fmt.Fprintf(w, "tidings index  %.2f s, %.2f CPU s, peak RSS %.0f MB (load %s)\n", x.Seconds, x.CPUSeconds, float64(x.PeakRSSBytes)/(1<<20), x.Load)
	}
	fmt.Fprintf(w, "client     tidings serve over stdio, go-sdk client; %d messages, clock %s; %d timed calls per tool after warm-up; load %s → %s; serve peak RSS %.0f MB\n",
		c.Messages, c.Now.Format(time.RFC3339), c.Calls, c.LoadBefore, c.LoadAfter, float64(c.ServerPeakRSSBytes)/(1<<20))
	for _, t := range c.Tools {
		fmt.Fprintf(w, "  %-30s p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms  server CPU/call %6.2f ms  answer %6.1f KB\n",
			t.Name, t.P50, t.P95, t.Max, t.ServerCPUMean, float64(t.ResultBytes)/1024)
	}
	if c.Profile != "" {
		fmt.Fprintf(w, "in-process pass (profiles of the timed calls in %s.<tool>; go tool pprof -tagfocus side=server):\n", c.Profile)
		for _, t := range c.ProfileTools {
			fmt.Fprintf(w, "  %-30s p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms\n", t.Name, t.P50, t.P95, t.Max)
		}
	}
}
