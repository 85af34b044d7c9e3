package android

import (
	"bytes"
	"context"
	"encoding/xml"
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

// bigPartDoc is one MMS whose image part carries a 20 MB base64 payload.
func bigPartDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`<smses count="1"><mms date="1795000000000" msg_box="1" address="+14155550123"><parts><part seq="0" ct="image/jpeg" name="big.jpg" data="`)
	b.Write(bytes.Repeat([]byte("QUJD"), 5<<20))
	b.WriteString(`"/></parts></mms></smses>`)
	return b.Bytes()
}

// BenchmarkBigAttribute compares this reader with encoding/xml's token
// stream on a 20 MB data attribute: B/op shows what each keeps in memory.
func BenchmarkBigAttribute(b *testing.B) {
	doc := bigPartDoc()
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			r := NewReader(bytes.NewReader(doc), nil)
			rec, err := r.Next()
			if err != nil || rec.(*MMS).Parts[0].Size != 15<<20 {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-xml", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			d := xml.NewDecoder(bytes.NewReader(doc))
			for {
				_, err := d.RawToken()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
