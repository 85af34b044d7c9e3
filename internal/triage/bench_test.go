package triage

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// BenchmarkClassifyAll classifies 5,000 threads (the labelled set,
// repeated with distinct ids): the review of a heavy user's 90 days.
func BenchmarkClassifyAll(b *testing.B) {
	_, base, opts := loadLabelled(b, "testdata/labelled.json")
	threads := make([]Thread, 0, 5000)
	for i := 0; len(threads) < 5000; i++ {
		t := base[i%len(base)]
		t.ChatID = fmt.Sprintf("%s#%d", t.ChatID, i)
		threads = append(threads, t)
	}
	msgs := 0
	for _, t := range threads {
		msgs += len(t.Messages)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ClassifyAll(threads, opts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(threads)), "ns/thread")
	_ = msgs
}

// BenchmarkResponseStats measures a year of a busy conversation (20,000
// messages).
func BenchmarkResponseStats(b *testing.B) {
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	msgs := make([]Message, 20000)
	for i := range msgs {
		msgs[i] = Message{ID: fmt.Sprint(i), Time: now.Add(-time.Duration(20000-i) * 25 * time.Minute), FromMe: (i/3)%2 == 0, Text: "x"}
	}
	b.ReportAllocs()
	for b.Loop() {
		ResponseStats(msgs, now, MaxHours)
	}
}
