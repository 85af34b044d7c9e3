package triage

import (
	"fmt"
	"strings"
)

// Outcome pairs a labelled bucket with a predicted one.
type Outcome struct {
	Want, Got Bucket
}

// PR is precision and recall of one bucket.
type PR struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// Support is how many threads carry the label; Predicted how many were
	// predicted with it.
	Support   int `json:"support"`
	Predicted int `json:"predicted"`
}

// Metrics summarise a classifier on a labelled set.
type Metrics struct {
	N         int                       `json:"n"`
	Correct   int                       `json:"correct"`
	Accuracy  float64                   `json:"accuracy"`
	PerBucket map[Bucket]PR             `json:"per_bucket"`
	Confusion map[Bucket]map[Bucket]int `json:"confusion"` // [want][got]
}

// Evaluate computes accuracy, per-bucket precision/recall and the
// confusion matrix. A bucket never predicted has precision 0 (and the
// table says "—").
func Evaluate(outcomes []Outcome) Metrics {
	m := Metrics{N: len(outcomes), PerBucket: map[Bucket]PR{}, Confusion: map[Bucket]map[Bucket]int{}}
	for _, b := range Buckets {
		m.Confusion[b] = map[Bucket]int{}
	}
	for _, o := range outcomes {
		if m.Confusion[o.Want] == nil {
			m.Confusion[o.Want] = map[Bucket]int{}
		}
		m.Confusion[o.Want][o.Got]++
		if o.Want == o.Got {
			m.Correct++
		}
	}
	if m.N > 0 {
		m.Accuracy = float64(m.Correct) / float64(m.N)
	}
	for _, b := range Buckets {
		var pr PR
		for _, g := range Buckets {
			pr.Support += m.Confusion[b][g]
			pr.Predicted += m.Confusion[g][b]
		}
		tp := m.Confusion[b][b]
		if pr.Predicted > 0 {
			pr.Precision = float64(tp) / float64(pr.Predicted)
		}
		if pr.Support > 0 {
			pr.Recall = float64(tp) / float64(pr.Support)
		}
		m.PerBucket[b] = pr
	}
	return m
}

// Table renders metrics as a Markdown table row block under a heading
// name: accuracy, then precision/recall per bucket.
func (m Metrics) Table(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | %.3f (%d/%d) |", name, m.Accuracy, m.Correct, m.N)
	for _, bk := range Buckets {
		pr := m.PerBucket[bk]
		p := "—"
		if pr.Predicted > 0 {
			p = fmt.Sprintf("%.2f", pr.Precision)
		}
		fmt.Fprintf(&b, " %s / %.2f |", p, pr.Recall)
	}
	return b.String()
}

// TableHeader is the header matching Table.
func TableHeader() string {
	return "| classifier | accuracy | needs_reply P / R | low_priority P / R | skip P / R |\n|---|---|---|---|---|"
}
