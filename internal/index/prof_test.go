package index

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

// TestProfileSync is a manual profiling harness (TIDINGS_PROFILE_N).
func TestProfileSync(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TIDINGS_PROFILE_N"))
	if n == 0 {
		t.Skip("set TIDINGS_PROFILE_N")
	}
	st := synth.NewStream(synth.Options{Messages: n})
	ix := openTest(t, t.TempDir(), Options{})
	src := &RowSource{SourceKey: "x", SourceKind: model.SourceIMessage, Reader: st}
	stop := make(chan struct{})
	var peak uint64
	var peakRSS int64
	var peakSys, peakHeapSys uint64
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if b, err := os.ReadFile("/proc/self/statm"); err == nil {
					var size, res int64
					fmt.Sscan(string(b), &size, &res)
					if rss := res * 4096; rss > peakRSS {
						peakRSS = rss
						peakSys = ms.Sys
						peakHeapSys = ms.HeapSys - ms.HeapReleased
					}
				}
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
					if f, err := os.Create("/tmp/idx/heap.prof"); err == nil {
						pprof.WriteHeapProfile(f)
						f.Close()
					}
				}
			}
		}
	}()
	t0 := time.Now()
	if _, err := ix.Sync(context.Background(), SyncOptions{}, src); err != nil {
		t.Fatal(err)
	}
	close(stop)
	t.Logf("sync %v, peak heap in use %d MB; peak RSS %d MB (Go runtime sys %d MB, heap held %d MB at that moment)", time.Since(t0), peak>>20, peakRSS>>20, peakSys>>20, peakHeapSys>>20)
}
