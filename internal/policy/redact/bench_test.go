package redact

import (
	"testing"
	"time"
)

// benchRedact redacts msgs in a loop and reports messages per second of
// wall-clock time and per second of CPU time.
func benchRedact(b *testing.B, msgs []corpusEntry) {
	r := Default()
	bytes := 0
	for _, m := range msgs {
		bytes += len(m.Text)
	}
	b.SetBytes(int64(bytes / len(msgs)))
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		m := msgs[i%len(msgs)]
		r.Redact(m.Text, m.hints())
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	// Wall-clock figures suffer when other processes share the cores;
	// messages per CPU-second (this process, all threads including GC) is
	// the per-core throughput.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "msgs/cpu-s")
	}
}

// BenchmarkRedactCorpus runs over the whole labelled corpus, which is far
// denser in secrets than real traffic.
func BenchmarkRedactCorpus(b *testing.B) { benchRedact(b, loadCorpus(b)) }

// BenchmarkRedactTypical runs over the corpus messages without secrets,
// which is what nearly all real messages look like.
func BenchmarkRedactTypical(b *testing.B) {
	var msgs []corpusEntry
	for _, e := range loadCorpus(b) {
		if len(e.Expect) == 0 {
			msgs = append(msgs, e)
		}
	}
	benchRedact(b, msgs)
}

// BenchmarkRedactSecrets runs over the corpus messages with secrets.
func BenchmarkRedactSecrets(b *testing.B) {
	var msgs []corpusEntry
	for _, e := range loadCorpus(b) {
		if len(e.Expect) > 0 {
			msgs = append(msgs, e)
		}
	}
	benchRedact(b, msgs)
}
