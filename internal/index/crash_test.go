package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

// crashCorpus is the deterministic source the crash test syncs: the first
// k messages of a synthetic history, with a few later edits and deletions
// when k covers them.
const crashTotal = 40000

// prefixReader serves the first k messages of data.
type prefixReader struct {
	*synth.Reader
	data *synth.Data
	k    int
}

func (p prefixReader) Messages(ctx context.Context, after int64, fn func(model.Message) error) error {
	return p.Reader.Messages(ctx, after, func(m model.Message) error {
		if m.RowID > int64(p.k) {
			return nil
		}
		return fn(m)
	})
}

func crashSource(k int) Source {
	d := synth.Generate(synth.Options{Messages: crashTotal, Seed: 7})
	return &RowSource{SourceKey: "imessage:/crash", SourceKind: model.SourceIMessage, Reader: prefixReader{d.Reader(), d, k},
		Now: func() time.Time { return testNow }}
}

// TestCrashChild is the process the crash test kills; it does nothing
// unless run by TestCrashSafety.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("TIDINGS_CRASH_DIR")
	if dir == "" {
		t.Skip("child of TestCrashSafety")
	}
	k, _ := strconv.Atoi(os.Getenv("TIDINGS_CRASH_K"))
	ix, err := Open(context.Background(), dir+"/index.db", Options{Embedder: &hashEmbedder{id: "hash/v1", dim: 64}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	src := crashSource(k)
	os.WriteFile(dir+"/child.started", nil, 0o600)
	if _, err := ix.Sync(context.Background(), SyncOptions{Embed: true}, src); err != nil {
		t.Fatal(err)
	}
	ix.Close()
}

// TestCrashSafety kills a syncing process with SIGKILL at random moments,
// several times, during a bulk load and during an incremental sync; the
// next run must complete with no duplicates and no loss.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	run := func(k int, killAfter time.Duration) (killed bool) {
		os.Remove(dir + "/child.started")
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TIDINGS_CRASH_DIR="+dir, "TIDINGS_CRASH_K="+strconv.Itoa(k))
		out, _ := os.CreateTemp(dir, "child-*.log")
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if killAfter > 0 {
			// Start the clock when the child begins syncing.
			for i := 0; i < 3000; i++ {
				if _, err := os.Stat(dir + "/child.started"); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			select {
			case err := <-done:
				if err != nil {
					b, _ := os.ReadFile(out.Name())
					t.Fatalf("child failed before the kill: %v\n%s", err, b)
				}
				return false
			case <-time.After(killAfter):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				return true
			}
		}
		if err := <-done; err != nil {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("child failed: %v\n%s", err, b)
		}
		return false
	}
	kills := 0
	for phase, k := range []int{crashTotal / 2, crashTotal} {
		for i := 0; i < 4; i++ {
			d := time.Duration(20+r.IntN(3000)) * time.Millisecond
			if run(k, d) {
				kills++
				t.Logf("phase %d: killed after %v", phase, d)
			}
		}
		run(k, 0) // completes
		checkCrashIndex(t, dir, k)
	}
	if kills < 4 {
		t.Logf("only %d runs were killed mid-way (the machine was fast)", kills)
	}
}

func checkCrashIndex(t *testing.T, dir string, k int) {
	t.Helper()
	ix, err := Open(context.Background(), dir+"/index.db", Options{Embedder: &hashEmbedder{id: "hash/v1", dim: 64}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d := synth.Generate(synth.Options{Messages: crashTotal, Seed: 7})
	want := 0
	for _, m := range d.Messages[:k] {
		if m.Kind != model.MsgReaction {
			want++
		}
	}
	var n, distinct int
	if err := ix.rdb.QueryRow("SELECT count(*), count(DISTINCT guid) FROM messages").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != want || distinct != want {
		t.Fatalf("after crashes: %d messages (%d distinct), want %d", n, distinct, want)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := ix.VectorStatus(); !st.Ready || int64(st.Vectors) != st.Searchable {
		t.Fatalf("vectors after crashes: %+v", st)
	}
	var wm string
	ix.rdb.QueryRow("SELECT watermark FROM sources").Scan(&wm)
	if want := fmt.Sprintf(`{"rowid":%d,`, k); len(wm) < len(want) || wm[:len(want)] != want {
		t.Fatalf("watermark %s, want rowid %d", wm, k)
	}
	// Spot-check search over the result.
	r, err := ix.Search(context.Background(), Query{Text: "dentist appointment", Mode: ModeHybrid})
	if err != nil || len(r.Hits) == 0 {
		t.Fatalf("search after crashes: %v %v", r, err)
	}
}
