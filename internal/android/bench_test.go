package android

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/tidings-mcp/tidings/internal/android/androidgen"
	"github.com/tidings-mcp/tidings/internal/model"
)

var (
	benchOnce sync.Once
	benchDoc  []byte
)

// benchExport is a 20,000-message generated export (about 15 MB).
func benchExport(b *testing.B) []byte {
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if _, err := androidgen.Write(&buf, androidgen.Config{Messages: 20000, Seed: 7}); err != nil {
			b.Fatal(err)
		}
		benchDoc = buf.Bytes()
	})
	return benchDoc
}

// BenchmarkReader measures the streaming reader alone (records/s, MB/s).
func BenchmarkReader(b *testing.B) {
	for _, meta := range []bool{false, true} {
		name := "full"
		if meta {
			name = "meta-only"
		}
		b.Run(name, func(b *testing.B) {
			doc := benchExport(b)
			b.SetBytes(int64(len(doc)))
			n := 0
			for b.Loop() {
				r := NewReader(bytes.NewReader(doc), &Options{MetaOnly: meta})
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkImport measures reading plus conversion to model values (owner
// pass included), without an index.
func BenchmarkImport(b *testing.B) {
	doc := benchExport(b)
	b.SetBytes(int64(len(doc)))
	n := 0
	for b.Loop() {
		res, err := Import(context.Background(), bytes.NewReader(doc), ImportOptions{Region: "US"},
			Sink{Conversations: func([]model.Conversation) error { return nil }, Message: func(model.Message) error { return nil }})
		if err != nil {
			b.Fatal(err)
		}
		n += res.Messages
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "messages/s")
}
