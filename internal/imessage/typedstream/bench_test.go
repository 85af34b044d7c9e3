package typedstream

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time. The benchmarks report
// bodies per CPU-second next to wall-clock bodies/s because the shared
// development VM is often oversubscribed, which inflates wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports bodies/s (wall) and bodies/cpu-s.
func loop(b *testing.B, f func() error) {
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - c0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "bodies/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "bodies/cpu-s")
	}
}

// benchBodies are typical message bodies: short, medium and long, with and
// without attributes beyond the part index.
func benchBodies(b *testing.B) []seed {
	mk := func(name, text string, runs []Run) seed {
		blob, err := EncodeAttributedBody(text, runs)
		if err != nil {
			b.Fatal(err)
		}
		return seed{name, blob}
	}
	medium := "Running about ten minutes late, traffic on the bridge is awful. Start without me and order me the usual?"
	long := strings.Repeat("Sed nibh velit, sodales et facilisis ut, sodales id libero. Mauris nec venenatis lorem. ", 25)
	obj := "\ufffc"
	return []seed{
		mk("short", "ok see you at 6", nil),
		mk("medium", medium, nil),
		mk("long", long, nil),
		mk("short-emoji", "haha yes 😂😂", nil),
		mk("attrs-mention-link", "Hey Dad look https://example.com/x", []Run{
			{Start: 0, End: 4, Part: 0}, {Start: 4, End: 7, Part: 0, Mention: "+15558675309"},
			{Start: 7, End: 13, Part: 0}, {Start: 13, End: 34, Part: 0, Link: "https://example.com/x", Detected: []string{"data"}},
		}),
		mk("attrs-attachments", obj+"look at this"+obj, []Run{
			{Start: 0, End: 3, Part: 0, AttachmentGUID: "at_0_F0668F79-20C2-49C9-A87F-1B007ABB0CED", Filename: "IMG_0001.HEIC"},
			{Start: 3, End: 15, Part: 1},
			{Start: 15, End: 18, Part: 2, AttachmentGUID: "at_2_F0668F79-20C2-49C9-A87F-1B007ABB0CED"},
		}),
		mk("attrs-styles", "Bold underline italic all", []Run{
			{Start: 0, End: 4, Part: 0, Styles: []string{"bold"}}, {Start: 4, End: 5, Part: 0},
			{Start: 5, End: 14, Part: 0, Styles: []string{"underline"}}, {Start: 14, End: 15, Part: 0},
			{Start: 15, End: 21, Part: 0, Styles: []string{"italic"}}, {Start: 21, End: 22, Part: 0},
			{Start: 22, End: 25, Part: 0, Styles: []string{"bold", "italic", "underline"}},
		}),
	}
}

// BenchmarkAttributedBody reports bodies/s for typical bodies (run with
// -cpu=1 for a per-core figure).
func BenchmarkAttributedBody(b *testing.B) {
	bodies := benchBodies(b)
	if dir := fixtureDirNoSkip("typedstream/attributed"); dir != "" {
		files := fixtureFiles(b, dir)
		for _, name := range []string{"AttributedBodyTextOnly", "URL", "Attachment"} {
			bodies = append(bodies, seed{"fixture-" + name, files[name]})
		}
	}
	for _, s := range bodies {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(s.blob)))
			loop(b, func() error {
				_, _, err := AttributedBody(s.blob)
				return err
			})
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	s := benchBodies(b)[4]
	loop(b, func() error {
		_, err := Decode(s.blob)
		return err
	})
}

func BenchmarkEncodeAttributedBody(b *testing.B) {
	runs := []Run{{Start: 0, End: 4, Part: 0}, {Start: 4, End: 7, Part: 0, Mention: "+15558675309"}, {Start: 7, End: 9, Part: 0}}
	loop(b, func() error {
		_, err := EncodeAttributedBody("Hey Dad o", runs)
		return err
	})
}
