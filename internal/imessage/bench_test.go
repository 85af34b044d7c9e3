package imessage_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var (
	benchOnce sync.Once
	benchDB   string
	benchErr  error
)

// benchDatabase returns the database to read: TIDINGS_BENCH_DB when set (e.g.
// a 1M-message demo made with `tidings demo --messages 1000000`), else a
// demo of TIDINGS_BENCH_MESSAGES (default 50000) generated once.
func benchDatabase(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("TIDINGS_BENCH_DB"); p != "" {
		return p
	}
	benchOnce.Do(func() {
		n := 50000
		if v, err := strconv.Atoi(os.Getenv("TIDINGS_BENCH_MESSAGES")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "tidings-bench-")
		if err != nil {
			benchErr = err
			return
		}
		_, benchErr = demo.Generate(context.Background(), demo.Options{Dir: dir, Messages: n, Seed: 1,
			Now: testclock.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)})
		benchDB = filepath.Join(dir, "chat.db")
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB
}

// BenchmarkMessages is a full read: every message converted, bodies decoded
// with the typedstream decoder, attachments and chats joined. It reports
// messages per second.
func BenchmarkMessages(b *testing.B) {
	path := benchDatabase(b)
	ctx := context.Background()
	r, err := imessage.Open(ctx, path, imessage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for i := 0; i < b.N; i++ {
		n := 0
		err := r.Messages(ctx, 0, func(m model.Message) error {
			if m.TextSource == imessage.TextUndecodable {
				b.Fatalf("undecodable body in %s", m.ID)
			}
			n++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(total)/float64(b.N), "msgs/op")
}

// BenchmarkChanged measures the full-table scan behind Changed.
func BenchmarkChanged(b *testing.B) {
	path := benchDatabase(b)
	ctx := context.Background()
	r, err := imessage.Open(ctx, path, imessage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	since := testclock.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.Changed(ctx, since, func(model.Message) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
