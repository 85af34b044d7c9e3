// Package dossiereval scores the dossier's commitment extraction on a
// labelled set of histories (the format of internal/dossier/testdata/
// holdout.json). It is the matcher of docs/dossier.md "Evaluation", shared
// by internal/dossier's TestCommitmentEvaluation and the blind set of
// internal/blindeval, so both report the same figures. Only tests import
// it.
package dossiereval

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/dossier"
	"github.com/tidings-mcp/tidings/internal/testfixture"
)

// Set is a labelled file: the clock the histories are read at, the owner's
// zone as a whole-hour offset, and the histories.
type Set struct {
	About     string    `json:"about"`
	Now       time.Time `json:"now"`
	ZoneHours int       `json:"zone_offset_hours"`
	Histories []History `json:"histories"`
}

// History is one person's direct conversation and the commitments a reader
// should find in it at Now.
type History struct {
	ID       string          `json:"id"`
	Subject  dossier.Subject `json:"subject"`
	Messages []Message       `json:"messages"`
	Expected []Expected      `json:"expected"`
}

// Message is one message; Ago is its age at Now ("3d", "90m").
type Message struct {
	ID      string `json:"id"`
	Ago     string `json:"ago"`
	From    string `json:"from"` // "me" or "them"
	Text    string `json:"text"`
	ReplyTo string `json:"reply_to"`
	App     string `json:"app"`
	Group   bool   `json:"group"`
}

// Expected is one labelled commitment. Source is the message that made it,
// Alt the reply that accepted it (a request and its acceptance are one
// commitment). Optional ones count for precision only.
type Expected struct {
	Source     string `json:"source"`
	Alt        string `json:"alt"`
	Kind       string `json:"kind"`
	Owner      string `json:"owner"`
	Status     string `json:"status"`
	ResolvedBy string `json:"resolved_by"`
	Due        string `json:"due"`
	Amount     int64  `json:"amount"`
	Optional   bool   `json:"optional"`
}

// Load reads a set.
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read labelled histories: %w", err)
	}
	var s Set
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if s.Now.IsZero() || len(s.Histories) == 0 {
		return nil, fmt.Errorf("%s: no now or no histories", path)
	}
	return &s, nil
}

// Location is the owner's zone.
func (s *Set) Location() *time.Location {
	return time.FixedZone("owner", s.ZoneHours*3600)
}

// Feed is h's messages as the dossier's feed delivers them, timed
// back from now.
func (h History) Feed(now time.Time) ([]dossier.Message, error) {
	var out []dossier.Message
	for _, hm := range h.Messages {
		ago, err := testfixture.ParseAgo(hm.Ago)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", h.ID, hm.ID, err)
		}
		m := dossier.Message{ID: hm.ID, ConversationID: "direct:" + h.Subject.Key, Time: now.Add(-ago), FromMe: hm.From == "me",
			Service: "iMessage", Text: hm.Text, ReplyTo: hm.ReplyTo, App: hm.App, Group: hm.Group}
		if hm.App != "" {
			m.Kind = "app"
		}
		if !m.FromMe && len(h.Subject.Handles) > 0 {
			m.Sender = h.Subject.Handles[0]
		}
		out = append(out, m)
	}
	return out, nil
}

// Metrics are the commitment-extraction counts.
type Metrics struct {
	Histories                                    int
	Expected, Extracted, MatchedReq, MatchedAny  int
	KindOK, OwnerOK, StatusOK, DueN, DueOK       int
	AmountN, AmountOK                            int
	PredResolved, ExpResolved, ResolvedCorrectly int
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Precision is the share of extracted commitments that match a labelled
// one (required or optional).
func (m Metrics) Precision() float64 { return ratio(m.MatchedAny, m.Extracted) }

// Recall is the share of required labelled commitments found.
func (m Metrics) Recall() float64 { return ratio(m.MatchedReq, m.Expected) }

// StatusAccuracy is the share of matched commitments with the right status.
func (m Metrics) StatusAccuracy() float64 { return ratio(m.StatusOK, m.MatchedReq) }

// ResolutionPrecision is the share of commitments reported resolved that
// cite the labelled settling message.
func (m Metrics) ResolutionPrecision() float64 { return ratio(m.ResolvedCorrectly, m.PredResolved) }

// ResolutionRecall is the share of labelled resolutions found.
func (m Metrics) ResolutionRecall() float64 { return ratio(m.ResolvedCorrectly, m.ExpResolved) }

// Table is the figures as the markdown table of docs/dossier.md.
func (m Metrics) Table() string {
	return fmt.Sprintf("| measure | value |\n|---|---|\n| extraction precision | %.2f (%d/%d) |\n| extraction recall | %.2f (%d/%d) |\n| kind correct (matched) | %d/%d |\n| owner correct (matched) | %d/%d |\n| status correct (matched) | %.2f (%d/%d) |\n| resolution precision | %.2f (%d/%d) |\n| resolution recall | %.2f (%d/%d) |\n| due date correct | %d/%d |\n| amount correct | %d/%d |",
		m.Precision(), m.MatchedAny, m.Extracted, m.Recall(), m.MatchedReq, m.Expected, m.KindOK, m.MatchedReq, m.OwnerOK, m.MatchedReq,
		m.StatusAccuracy(), m.StatusOK, m.MatchedReq, m.ResolutionPrecision(), m.ResolvedCorrectly, m.PredResolved,
		m.ResolutionRecall(), m.ResolvedCorrectly, m.ExpResolved, m.DueOK, m.DueN, m.AmountOK, m.AmountN)
}

// Score builds each history's dossier at Now and matches its commitments
// with the labels: a commitment matches a label when its first source is
// the label's source or alt. It returns the counts and one note per
// difference (misses, wrong kind, owner, status or due, extras); the notes
// quote the set's messages, so a blind heldout half must not print them.
func Score(s *Set) (Metrics, []string, error) {
	loc := s.Location()
	var m Metrics
	var notes []string
	m.Histories = len(s.Histories)
	for _, h := range s.Histories {
		msgs, err := h.Feed(s.Now)
		if err != nil {
			return m, nil, err
		}
		d := dossier.Build(h.Subject, msgs, dossier.Options{Location: loc})
		rep := d.Report(s.Now)
		all := slices.Concat(rep.Active, rep.Past, rep.Resolved)
		// Resolved may be cut at MaxResolved; the histories are small.
		m.Extracted += len(all)
		used := map[string]bool{}
		for _, e := range h.Expected {
			if !e.Optional {
				m.Expected++
				if e.Status == dossier.StatusResolved {
					m.ExpResolved++
				}
			}
			var got *dossier.Commitment
			for i := range all {
				if !used[all[i].ID] && (all[i].Sources[0] == e.Source || e.Alt != "" && all[i].Sources[0] == e.Alt) {
					got = &all[i]
					used[got.ID] = true
					break
				}
			}
			if got == nil {
				if !e.Optional {
					notes = append(notes, fmt.Sprintf("  %-9s MISSED %s %s by %s (%s)", h.ID, e.Source, e.Kind, e.Owner, h.text(e.Source)))
				}
				continue
			}
			m.MatchedAny++
			if e.Optional {
				continue
			}
			m.MatchedReq++
			if got.Kind == e.Kind || got.Sources[0] == e.Alt {
				m.KindOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s kind   %s: got %s, want %s", h.ID, e.Source, got.Kind, e.Kind))
			}
			if got.Owner == e.Owner {
				m.OwnerOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s owner  %s: got %s, want %s", h.ID, e.Source, got.Owner, e.Owner))
			}
			if got.Status == e.Status {
				m.StatusOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s status %s: got %s (%s by %v), want %s (by %s)", h.ID, e.Source, got.Status, got.Resolution, got.ResolvedBy, e.Status, e.ResolvedBy))
			}
			if got.Status == dossier.StatusResolved {
				m.PredResolved++
				if e.Status == dossier.StatusResolved && slices.Contains(got.ResolvedBy, e.ResolvedBy) {
					m.ResolvedCorrectly++
				}
			}
			if e.Due != "" {
				m.DueN++
				if got.Due != nil && got.Due.Start.In(loc).Format("2006-01-02") == e.Due {
					m.DueOK++
				} else {
					notes = append(notes, fmt.Sprintf("  %-9s due    %s: got %v, want %s", h.ID, e.Source, dueString(got.Due, loc), e.Due))
				}
			}
			if e.Amount != 0 {
				m.AmountN++
				if got.Amount != nil && got.Amount.Cents == e.Amount {
					m.AmountOK++
				}
			}
		}
		for _, c := range all {
			if !used[c.ID] {
				notes = append(notes, fmt.Sprintf("  %-9s EXTRA  %s %s by %s: %q", h.ID, c.Sources[0], c.Kind, c.Owner, c.Text))
			}
		}
	}
	return m, notes, nil
}

// text is a message's text, clipped for a note.
func (h History) text(id string) string {
	for _, m := range h.Messages {
		if m.ID == id {
			if r := []rune(m.Text); len(r) > 60 {
				return string(r[:59]) + "…"
			}
			return m.Text
		}
	}
	return "?"
}

func dueString(d *dossier.Due, loc *time.Location) string {
	if d == nil {
		return "none"
	}
	return d.Start.In(loc).Format("2006-01-02 15:04") + " (" + d.Precision + ")"
}

// Summary is one line of the headline figures.
func (m Metrics) Summary() string {
	return strings.Join([]string{
		fmt.Sprintf("precision %.2f (%d/%d)", m.Precision(), m.MatchedAny, m.Extracted),
		fmt.Sprintf("recall %.2f (%d/%d)", m.Recall(), m.MatchedReq, m.Expected),
		fmt.Sprintf("status %.2f (%d/%d)", m.StatusAccuracy(), m.StatusOK, m.MatchedReq),
		fmt.Sprintf("resolution P %.2f (%d/%d)", m.ResolutionPrecision(), m.ResolvedCorrectly, m.PredResolved),
		fmt.Sprintf("resolution R %.2f (%d/%d)", m.ResolutionRecall(), m.ResolvedCorrectly, m.ExpResolved),
		fmt.Sprintf("due %d/%d", m.DueOK, m.DueN),
		fmt.Sprintf("amount %d/%d", m.AmountOK, m.AmountN),
	}, ", ")
}
