package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// corpusEntry is one labelled message of testdata/corpus.jsonl.
type corpusEntry struct {
	Text  string `json:"text"`
	Hints *struct {
		OneTimeCodes    [][2]int `json:"one_time_codes"`
		SenderShortCode bool     `json:"sender_short_code"`
	} `json:"hints,omitempty"`
	Expect []struct {
		Class string `json:"class"`
		Text  string `json:"text"`
	} `json:"expect"`
}

func (e corpusEntry) hints() Hints {
	if e.Hints == nil {
		return Hints{}
	}
	return Hints{OneTimeCodes: e.Hints.OneTimeCodes, SenderShortCode: e.Hints.SenderShortCode}
}

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus line %d: %v", line, err)
		}
		for _, x := range e.Expect {
			if Mask(x.Class) == "" {
				t.Fatalf("corpus line %d: unknown class %q", line, x.Class)
			}
			if !strings.Contains(e.Text, x.Text) {
				t.Fatalf("corpus line %d: expected %q not in text", line, x.Text)
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	return out
}

type prCount struct{ tp, fp, fn int }

func (c prCount) precision() float64 {
	if c.tp+c.fp == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fp)
}

func (c prCount) recall() float64 {
	if c.tp+c.fn == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fn)
}

// evaluate scores the default redactor on the corpus at span level: a
// finding is a true positive when an expected finding of the same class
// covers exactly the same text (each expected finding matches once).
func evaluate(t *testing.T, corpus []corpusEntry) (map[string]*prCount, prCount, []string) {
	per := map[string]*prCount{}
	for _, c := range classOrder {
		per[c] = &prCount{}
	}
	var total prCount
	var misses []string
	r := New(DefaultConfig())
	for i, e := range corpus {
		_, fs := r.Redact(e.Text, e.hints())
		used := make([]bool, len(e.Expect))
		for _, f := range fs {
			got := e.Text[f.Start:f.End]
			hit := false
			for k, x := range e.Expect {
				if !used[k] && x.Class == f.Class && x.Text == got {
					used[k], hit = true, true
					break
				}
			}
			if hit {
				per[f.Class].tp++
				total.tp++
			} else {
				per[f.Class].fp++
				total.fp++
				misses = append(misses, fmt.Sprintf("FP #%d %s %q in %q", i+1, f.Class, got, e.Text))
			}
		}
		for k, x := range e.Expect {
			if !used[k] {
				per[x.Class].fn++
				total.fn++
				misses = append(misses, fmt.Sprintf("FN #%d %s %q in %q", i+1, x.Class, x.Text, e.Text))
			}
		}
	}
	return per, total, misses
}

// TestCorpusPrecisionAndRecallAreAtLeast95Percent: measures precision and
// recall on the labelled corpus, fails if either is below 0.95 overall, and
// prints the table recorded in docs/redaction.md (go test -run
// TestCorpusPrecisionAndRecallAreAtLeast95Percent -v).
func TestCorpusPrecisionAndRecallAreAtLeast95Percent(t *testing.T) {
	corpus := loadCorpus(t)
	if len(corpus) < 300 {
		t.Fatalf("corpus has %d messages, want at least 300", len(corpus))
	}
	per, total, misses := evaluate(t, corpus)
	negatives := 0
	for _, e := range corpus {
		if len(e.Expect) == 0 {
			negatives++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "corpus: %d messages (%d without any secret)\n\n", len(corpus), negatives)
	fmt.Fprintf(&b, "| class | expected | found | TP | FP | FN | precision | recall |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	classes := append([]string(nil), classOrder...)
	sort.Strings(classes)
	for _, c := range classes {
		p := per[c]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.3f | %.3f |\n", c, p.tp+p.fn, p.tp+p.fp, p.tp, p.fp, p.fn, p.precision(), p.recall())
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | **%.3f** | **%.3f** |\n", total.tp+total.fn, total.tp+total.fp, total.tp, total.fp, total.fn, total.precision(), total.recall())
	t.Log("\n" + b.String())
	for _, m := range misses {
		t.Log(m)
	}
	if total.precision() < 0.95 || total.recall() < 0.95 {
		t.Errorf("overall precision %.3f, recall %.3f; want both >= 0.95", total.precision(), total.recall())
	}
}
