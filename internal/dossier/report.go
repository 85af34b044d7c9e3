package dossier

import (
	"slices"
	"time"
)

// Report is the dossier as the get_contact_dossier tool presents it at a
// given moment. Everything in it is extracted from messages and cites
// them; Generated is false. A generated Summary, when present, says so
// itself.
type Report struct {
	Subject Subject   `json:"subject"`
	AsOf    time.Time `json:"as_of"`
	UpTo    Cursor    `json:"up_to"`
	// Messages is how many messages the dossier was built from.
	Messages   int        `json:"messages"`
	Background Background `json:"background"`
	// Active are open commitments not yet due, or without a date and
	// mentioned in the last StaleAfter; Past are open ones whose date has
	// gone by (status "past") or that went unmentioned longer (status
	// "stale"); Resolved are
	// the most recently settled ones, newest first (at most MaxResolved).
	Active   []Commitment `json:"active_commitments"`
	Past     []Commitment `json:"past_commitments"`
	Resolved []Commitment `json:"resolved_commitments"`
	History  History      `json:"relationship_history"`
	// Generated is false: the report is extractive.
	Generated bool     `json:"generated"`
	Summary   *Summary `json:"summary,omitempty"`
}

// History is the relationship over time.
type History struct {
	// Quarters are the newest MaxQuarters quarters with activity, oldest
	// first.
	Quarters      []Quarter   `json:"quarters"`
	ResponseTrend Trend       `json:"response_trend"`
	Topics        []TopicView `json:"recurring_topics"`
	// LastSignificant is the newest exchange with a commitment, a question
	// answered, or a long back-and-forth.
	LastSignificant *Exchange `json:"last_significant_exchange,omitempty"`
}

// Trend compares the owner's median reply time in the two newest quarters
// that have at least MinTrendSamples replies each.
type Trend struct {
	// Direction is "faster", "slower", "steady", or "unknown" when there
	// are not two such quarters.
	Direction    string `json:"direction"`
	From         string `json:"from,omitempty"`
	To           string `json:"to,omitempty"`
	FromMedian   int64  `json:"from_median_seconds,omitempty"`
	ToMedian     int64  `json:"to_median_seconds,omitempty"`
	FromSamples  int    `json:"from_samples,omitempty"`
	ToSamples    int    `json:"to_samples,omitempty"`
	Explanation  string `json:"explanation"`
	TheirMedian  int64  `json:"their_median_seconds,omitempty"`
	TheirSamples int    `json:"their_samples,omitempty"`
}

// Report limits.
const (
	// StaleAfter is how long an open commitment without a date may go
	// unmentioned before the report stops calling it active.
	StaleAfter      = 30 * 24 * time.Hour
	MaxResolved     = 10
	MaxQuarters     = 8
	MaxTopics       = 10
	MinTrendSamples = 3
)

// Report presents the dossier as of now: open commitments whose due date
// has passed are reported as past.
func (d *Dossier) Report(now time.Time) Report {
	r := Report{Subject: d.Subject, AsOf: now, UpTo: d.UpTo, Messages: d.Folded, Background: d.Background,
		Active: []Commitment{}, Past: []Commitment{}, Resolved: []Commitment{}}
	for _, c := range d.Commitments {
		switch {
		case d.State.Offers[c.ID] && !c.Accepted:
			continue // an offer nobody took up commits nobody
		case c.Status == StatusOpen && c.Due != nil && now.After(c.Due.End):
			c.Status = StatusPast
			r.Past = append(r.Past, c)
		case c.Status == StatusOpen && c.Due == nil && now.Sub(c.Updated) > StaleAfter:
			c.Status = StatusStale
			r.Past = append(r.Past, c)
		case c.Status == StatusOpen:
			r.Active = append(r.Active, c)
		default:
			r.Resolved = append(r.Resolved, c)
		}
	}
	slices.SortStableFunc(r.Resolved, func(a, b Commitment) int { return b.Resolved.Compare(a.Resolved) })
	if len(r.Resolved) > MaxResolved {
		r.Resolved = r.Resolved[:MaxResolved]
	}
	q := d.Quarters
	if len(q) > MaxQuarters {
		q = q[len(q)-MaxQuarters:]
	}
	r.History.Quarters = slices.Clone(q)
	if n := len(r.History.Quarters); n == 0 {
		r.History.Quarters = []Quarter{}
	} else {
		r.History.Quarters[n-1].MyReplies = summarizeSamples(d.State.MySamples)
		r.History.Quarters[n-1].TheirReplies = summarizeSamples(d.State.TheirSamples)
	}
	r.History.ResponseTrend = trend(r.History.Quarters)
	r.History.Topics = d.recurringTopics(MaxTopics)
	if r.History.Topics == nil {
		r.History.Topics = []TopicView{}
	}
	r.History.LastSignificant = d.LastSignificant
	if s := d.State.Session; s != nil {
		if why := s.significance(); len(why) > 0 {
			ex := s.Exchange
			ex.Why, ex.IDs = why, slices.Clone(ex.IDs)
			r.History.LastSignificant = &ex
		}
	}
	return r
}

func trend(quarters []Quarter) Trend {
	var idx []int
	for i := len(quarters) - 1; i >= 0 && len(idx) < 2; i-- {
		if quarters[i].MyReplies.Samples >= MinTrendSamples {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return Trend{Direction: "unknown", Explanation: "fewer than two quarters with at least 3 replies"}
	}
	to, from := quarters[idx[0]], quarters[idx[1]]
	t := Trend{From: from.Quarter, To: to.Quarter, FromMedian: from.MyReplies.MedianSeconds, ToMedian: to.MyReplies.MedianSeconds,
		FromSamples: from.MyReplies.Samples, ToSamples: to.MyReplies.Samples,
		TheirMedian: to.TheirReplies.MedianSeconds, TheirSamples: to.TheirReplies.Samples}
	ratio := float64(t.ToMedian+1) / float64(t.FromMedian+1)
	switch {
	case ratio < 0.75:
		t.Direction = "faster"
	case ratio > 1.33:
		t.Direction = "slower"
	default:
		t.Direction = "steady"
	}
	t.Explanation = "median reply " + from.MyReplies.MedianHuman + " in " + from.Quarter + ", " + to.MyReplies.MedianHuman + " in " + to.Quarter
	return t
}
