package triage

import (
	"fmt"
	"strings"
	"testing"
)

// Acceptance floors of issue 5: accuracy ≥ 0.80 and ≥ the best naive
// variant + 0.15.
const (
	minAccuracy    = 0.80
	minOverNaive   = 0.15
	labelledSetMin = 40
)

// TestLabelledSet is the triage evaluation and its regression floor. Run
// with -v to print the table recorded in docs/triage.md.
func TestLabelledSet(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		min        int
	}{
		{"labelled", "testdata/labelled.json", labelledSetMin},
		{"holdout", "testdata/holdout.json", 20},
	} {
		t.Run(tc.name, func(t *testing.T) { evaluateFile(t, tc.path, tc.min) })
	}
}

func evaluateFile(t *testing.T, path string, minThreads int) {
	f, threads, opts := loadLabelled(t, path)
	if len(threads) < minThreads {
		t.Fatalf("%s has %d threads, want at least %d", path, len(threads), minThreads)
	}
	var ours, naiveSkip, naiveLow []Outcome
	labels := map[Bucket]int{}
	var misses []string
	for i := range threads {
		want := f.Threads[i].Label
		labels[want]++
		d := Classify(&threads[i], opts)
		ours = append(ours, Outcome{want, d.Bucket})
		naiveSkip = append(naiveSkip, Outcome{want, Naive(&threads[i], Skip)})
		naiveLow = append(naiveLow, Outcome{want, Naive(&threads[i], LowPriority)})
		if d.Bucket != want {
			misses = append(misses, fmt.Sprintf("  %-34s want %-12s got %-12s %s", f.Threads[i].ID, want, d.Bucket, strings.Join(d.Reasons, "; ")))
		}
	}
	m, ns, nl := Evaluate(ours), Evaluate(naiveSkip), Evaluate(naiveLow)
	t.Logf("%s: %d threads (needs_reply %d, low_priority %d, skip %d)\n%s\n%s\n%s\n%s",
		path, len(threads), labels[NeedsReply], labels[LowPriority], labels[Skip],
		TableHeader(), m.Table("triage.Classify"), ns.Table("naive (else skip)"), nl.Table("naive (else low_priority)"))
	t.Logf("confusion [want → got]: %v", m.Confusion)
	if len(misses) > 0 {
		t.Logf("misclassified:\n%s", strings.Join(misses, "\n"))
	}
	best := max(ns.Accuracy, nl.Accuracy)
	if m.Accuracy < minAccuracy {
		t.Errorf("accuracy %.3f < %.2f", m.Accuracy, minAccuracy)
	}
	if m.Accuracy < best+minOverNaive {
		t.Errorf("accuracy %.3f is not %.2f above the best naive rule (%.3f)", m.Accuracy, minOverNaive, best)
	}
}
