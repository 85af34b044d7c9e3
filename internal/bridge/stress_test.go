//go:build unix

package bridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// workerEnv makes the test binary a bridge worker process (see TestMain):
// `--watch` over the folder it names, with the fake backend.
const workerEnv = "TIDINGS_BRIDGE_TEST_WORKER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		os.Exit(runTestWorker(dir))
	}
	os.Exit(m.Run())
}

func runTestWorker(dir string) int {
	fake, err := loadFake()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	w, err := NewWorker(Options{Dir: dir, HelperVersion: "test-worker",
		Open: func(context.Context, Role) (Backend, error) { return fake, nil }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer w.Close()
	if os.Getenv(workerEnv+"_PAUSE") != "" {
		w.pause = func() { time.Sleep(300 * time.Microsecond) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := w.Watch(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerProc is a worker in a separate process, as in production.
type workerProc struct {
	cmd *exec.Cmd
}

func startWorkerProc(t testing.TB, dir string, env ...string) *workerProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), workerEnv+"="+dir), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &workerProc{cmd: cmd}
}

// kill ends the worker with SIGKILL: no cleanup runs.
func (p *workerProc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// stop ends the worker with SIGTERM and waits.
func (p *workerProc) stop(t testing.TB) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("worker exit: %v", err)
	}
}

// malformed returns the i-th kind of invalid request body for id.
func malformed(i int, id string) []byte {
	switch i % 5 {
	case 0:
		return []byte("this is not JSON")
	case 1:
		return []byte(`{"id":"` + id + `","action":"status"}`) // no params
	case 2:
		return []byte(`[{"id":"` + id + `"}]`)
	case 3:
		return []byte(`{"id":"` + id + `","action":42,"params":{}}`)
	}
	return append([]byte(`{"id":"`+id+`","action":"status","params":{"pad":"`), bytes.Repeat([]byte("x"), MaxRequestSize)...)
}

// TestStressAnswersEveryRequestOnceThroughKills: 8 concurrent clients send N
// requests (5% malformed) while the worker process is killed with SIGKILL
// and restarted twice. Every valid request gets exactly one correct answer,
// every malformed one exactly one error, the id record holds each id once,
// and nothing is left behind after reaping. N is 1,000 by default;
// TIDINGS_BRIDGE_STRESS_N=10000 gives the full run recorded in
// docs/benchmarks.md.
func TestStressAnswersEveryRequestOnceThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test skipped in -short mode")
	}
	n := 1000
	if v := os.Getenv("TIDINGS_BRIDGE_STRESS_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 16 {
			t.Fatalf("TIDINGS_BRIDGE_STRESS_N=%q", v)
		}
	}
	const clients = 8
	dir := bridgeDir(t)
	must(t, PrepareFolder(dir))
	// The worker pauses between the steps of answering (prepare, record,
	// publish, remove), so each kill lands inside an answer in progress.
	var procMu sync.Mutex
	pause := workerEnv + "_PAUSE=1"
	proc := startWorkerProc(t, dir, pause)

	var done, bad, valid atomic.Int64
	kills := 0
	killDone := make(chan struct{})
	go func() {
		defer close(killDone)
		for _, at := range []int64{int64(n) / 3, 2 * int64(n) / 3} {
			for done.Load() < at {
				time.Sleep(time.Millisecond)
			}
			procMu.Lock()
			proc.kill()
			kills++
			time.Sleep(20 * time.Millisecond) // requests pile up meanwhile
			proc = startWorkerProc(t, dir, pause)
			procMu.Unlock()
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range clients {
		wg.Go(func() {
			c := NewClient(dir)
			defer c.Close()
			c.Timeout = 2 * time.Minute
			for i := g; i < n; i += clients {
				id := fmt.Sprintf("s%05d", i)
				var err error
				if i%20 == 7 { // 5% malformed
					bad.Add(1)
					var r *Response
					r, err = c.send(context.Background(), id, "malformed", malformed(i/20, id))
					var re *RemoteError
					switch {
					case errors.As(err, &re) && r != nil && r.ID == id && !r.OK:
						err = nil
					case err == nil:
						err = fmt.Errorf("%s: malformed request answered ok", id)
					}
				} else {
					valid.Add(1)
					action := ActionStatus
					if i%2 == 0 {
						action = ActionSearch
					}
					var r *Response
					r, err = c.call(context.Background(), id, action, map[string]any{"term": id})
					if err == nil {
						var res SearchResult
						if action == ActionSearch && (r.Decode(&res) != nil || res.Term != id) {
							err = fmt.Errorf("%s: wrong answer %s", id, r.Raw)
						}
					}
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-killDone
	procMu.Lock()
	proc.stop(t)
	procMu.Unlock()
	close(errs)
	nerr := 0
	for err := range errs {
		if nerr < 10 {
			t.Error(err)
		}
		nerr++
	}
	if nerr > 0 {
		t.Fatalf("%d of %d requests failed", nerr, n)
	}
	if kills != 2 {
		t.Errorf("worker killed %d times, want 2", kills)
	}

	// Each id is recorded exactly once: no request was answered twice.
	f, err := os.Open(filepath.Join(dir, ControlDir, idRecordName))
	must(t, err)
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 4 {
			seen[fields[1]]++
		}
	}
	f.Close()
	if len(seen) != n {
		t.Errorf("id record holds %d ids, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("id %s recorded %d times", id, k)
		}
	}
	// Nothing left: every response was read and deleted by its client (a
	// second answer would remain here), every request removed.
	left := func() []string {
		var out []string
		for _, d := range []string{RequestsDir, ResponsesDir} {
			for _, name := range dirNames(t, filepath.Join(dir, ControlDir, d)) {
				out = append(out, d+"/"+name)
			}
		}
		return out
	}
	before := left()
	for _, name := range before {
		if strings.HasPrefix(name, RequestsDir+"/request-") || strings.HasPrefix(name, ResponsesDir+"/response-") {
			t.Errorf("left behind before reaping: %s", name)
		}
	}
	later := time.Now().Add(2 * time.Hour)
	w, err := NewWorker(Options{Dir: dir, Now: func() time.Time { return later }})
	must(t, err)
	if _, err := w.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if after := left(); len(after) != 0 {
		t.Errorf("left behind after reaping: %v", after)
	}
	t.Logf("stress: %d requests (%d valid, %d malformed) from %d clients in %s (%.0f req/s), worker killed %d times; temp files before reaping: %v",
		n, valid.Load(), bad.Load(), clients, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), kills, before)
}

// BenchmarkRoundTrip measures a client → worker → client round trip with
// the worker in --watch mode in its own process (fake backend), one
// request at a time ("seq") and from 8 concurrent clients ("8way"). It
// reports p50 and p95 latency; run with -benchtime 1000x.
//
// With TIDINGS_BRIDGE_BENCH_DIR set to the folder of a running real
// helper (`tidings helper --watch` over real data), it measures that
// helper instead; TIDINGS_BRIDGE_BENCH_TERM sets the search term.
func BenchmarkRoundTrip(b *testing.B) {
	external := os.Getenv("TIDINGS_BRIDGE_BENCH_DIR")
	term := os.Getenv("TIDINGS_BRIDGE_BENCH_TERM")
	if term == "" {
		term = "dinner plans"
	}
	for _, action := range []string{ActionStatus, ActionSearch} {
		for _, par := range []int{1, 8} {
			name := fmt.Sprintf("%s/seq", action)
			if par > 1 {
				name = fmt.Sprintf("%s/%dway", action, par)
			}
			b.Run(name, func(b *testing.B) {
				dir := external
				if dir == "" {
					dir = bridgeDir(b)
					if err := PrepareFolder(dir); err != nil {
						b.Fatal(err)
					}
					proc := startWorkerProc(b, dir)
					defer proc.stop(b)
				}
				clients := make([]*Client, par)
				for i := range clients {
					clients[i] = NewClient(dir)
					defer clients[i].Close()
					if _, err := clients[i].Connect(context.Background()); err != nil { // warm up
						b.Fatal(err)
					}
				}
				params := map[string]any{"term": term, "days": 30}
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for _, c := range clients {
					wg.Go(func() {
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							t0 := time.Now()
							if _, err := c.Call(context.Background(), action, params); err != nil {
								b.Error(err)
								return
							}
							lat[i] = time.Since(t0)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			})
		}
	}
}
