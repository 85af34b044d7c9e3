package index

import (
	"context"
	"os"
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
	d := synth.Generate(synth.Options{Messages: n})
	ix := openTest(t, t.TempDir(), Options{})
	src := &RowSource{SourceKey: "x", SourceKind: model.SourceIMessage, Reader: d.Reader()}
	t0 := time.Now()
	if _, err := ix.Sync(context.Background(), SyncOptions{}, src); err != nil {
		t.Fatal(err)
	}
	t.Logf("sync %v", time.Since(t0))
}
