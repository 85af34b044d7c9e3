package dossier

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testfixture"
)

type historiesFile struct {
	Now       time.Time `json:"now"`
	ZoneHours int       `json:"zone_offset_hours"`
	Histories []history `json:"histories"`
}

type history struct {
	ID       string    `json:"id"`
	Subject  Subject   `json:"subject"`
	Messages []histMsg `json:"messages"`
	Expected []struct {
		Source     string `json:"source"`
		Alt        string `json:"alt"`
		Kind       string `json:"kind"`
		Owner      string `json:"owner"`
		Status     string `json:"status"`
		ResolvedBy string `json:"resolved_by"`
		Due        string `json:"due"`
		Amount     int64  `json:"amount"`
		Optional   bool   `json:"optional"`
	} `json:"expected"`
}

type histMsg struct {
	ID      string `json:"id"`
	Ago     string `json:"ago"`
	From    string `json:"from"`
	Text    string `json:"text"`
	ReplyTo string `json:"reply_to"`
	App     string `json:"app"`
	Group   bool   `json:"group"`
}

func loadHistories(t testing.TB, path string) (historiesFile, *time.Location) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f historiesFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f, time.FixedZone("owner", f.ZoneHours*3600)
}

func (h history) messages(t testing.TB, now time.Time) []Message {
	t.Helper()
	var out []Message
	for _, hm := range h.Messages {
		ago, err := testfixture.ParseAgo(hm.Ago)
		if err != nil {
			t.Fatalf("%s/%s: %v", h.ID, hm.ID, err)
		}
		m := Message{ID: hm.ID, ConversationID: "direct:" + h.Subject.Key, Time: now.Add(-ago), FromMe: hm.From == "me",
			Service: "iMessage", Text: hm.Text, ReplyTo: hm.ReplyTo, App: hm.App, Group: hm.Group}
		if hm.App != "" {
			m.Kind = "app"
		}
		if !m.FromMe && len(h.Subject.Handles) > 0 {
			m.Sender = h.Subject.Handles[0]
		}
		out = append(out, m)
	}
	return out
}

// dossierMetrics are the commitment-extraction figures.
type dossierMetrics struct {
	expected, extracted, matchedReq, matchedAny  int
	kindOK, ownerOK, statusOK, dueN, dueOK       int
	amountN, amountOK                            int
	predResolved, expResolved, resolvedCorrectly int
}

func (m dossierMetrics) ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (m dossierMetrics) precision() float64 { return m.ratio(m.matchedAny, m.extracted) }
func (m dossierMetrics) recall() float64    { return m.ratio(m.matchedReq, m.expected) }
func (m dossierMetrics) resP() float64      { return m.ratio(m.resolvedCorrectly, m.predResolved) }
func (m dossierMetrics) resR() float64      { return m.ratio(m.resolvedCorrectly, m.expResolved) }

// Regression floors for the dossier evaluation (docs/dossier.md records the
// figures they guard).
const (
	floorPrecision    = 0.90
	floorRecall       = 0.85
	floorResPrecision = 0.90
	floorResRecall    = 0.80
	floorStatus       = 0.90
)

// holdoutFloors guard the held-out histories (precision, recall,
// resolution precision, resolution recall, status accuracy).
var holdoutFloors = [5]float64{0.90, 0.90, 0.90, 0.80, 0.90}

// TestCommitmentEvaluation measures commitment extraction and resolution
// on the labelled histories. Run with -v for the table and every miss.
func TestCommitmentEvaluation(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		floors     [5]float64 // precision, recall, resolution P, resolution R, status
	}{
		{"tuned", "testdata/histories.json", [5]float64{floorPrecision, floorRecall, floorResPrecision, floorResRecall, floorStatus}},
		{"holdout", "testdata/holdout.json", holdoutFloors},
	} {
		t.Run(tc.name, func(t *testing.T) { evaluateHistories(t, tc.path, tc.floors) })
	}
}

func evaluateHistories(t *testing.T, path string, floors [5]float64) {
	f, loc := loadHistories(t, path)
	var m dossierMetrics
	var notes []string
	for _, h := range f.Histories {
		d := Build(h.Subject, h.messages(t, f.Now), Options{Location: loc})
		rep := d.Report(f.Now)
		all := slices.Concat(rep.Active, rep.Past, rep.Resolved)
		// Resolved may be cut at MaxResolved; the histories are small.
		m.extracted += len(all)
		used := map[string]bool{}
		for _, e := range h.Expected {
			if !e.Optional {
				m.expected++
				if e.Status == StatusResolved {
					m.expResolved++
				}
			}
			var got *Commitment
			for i := range all {
				if !used[all[i].ID] && (all[i].Sources[0] == e.Source || e.Alt != "" && all[i].Sources[0] == e.Alt) {
					got = &all[i]
					used[got.ID] = true
					break
				}
			}
			if got == nil {
				if !e.Optional {
					notes = append(notes, fmt.Sprintf("  %-9s MISSED %s %s by %s (%s)", h.ID, e.Source, e.Kind, e.Owner, msgText(h, e.Source)))
				}
				continue
			}
			m.matchedAny++
			if e.Optional {
				continue
			}
			m.matchedReq++
			if got.Kind == e.Kind || got.Sources[0] == e.Alt {
				m.kindOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s kind   %s: got %s, want %s", h.ID, e.Source, got.Kind, e.Kind))
			}
			if got.Owner == e.Owner {
				m.ownerOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s owner  %s: got %s, want %s", h.ID, e.Source, got.Owner, e.Owner))
			}
			if got.Status == e.Status {
				m.statusOK++
			} else {
				notes = append(notes, fmt.Sprintf("  %-9s status %s: got %s (%s by %v), want %s (by %s)", h.ID, e.Source, got.Status, got.Resolution, got.ResolvedBy, e.Status, e.ResolvedBy))
			}
			if got.Status == StatusResolved {
				m.predResolved++
				if e.Status == StatusResolved && slices.Contains(got.ResolvedBy, e.ResolvedBy) {
					m.resolvedCorrectly++
				}
			}
			if e.Due != "" {
				m.dueN++
				if got.Due != nil && got.Due.Start.In(loc).Format("2006-01-02") == e.Due {
					m.dueOK++
				} else {
					notes = append(notes, fmt.Sprintf("  %-9s due    %s: got %v, want %s", h.ID, e.Source, dueString(got.Due, loc), e.Due))
				}
			}
			if e.Amount != 0 {
				m.amountN++
				if got.Amount != nil && got.Amount.Cents == e.Amount {
					m.amountOK++
				}
			}
		}
		for _, c := range all {
			if !used[c.ID] {
				notes = append(notes, fmt.Sprintf("  %-9s EXTRA  %s %s by %s: %q", h.ID, c.Sources[0], c.Kind, c.Owner, c.Text))
			}
		}
	}
	t.Logf("%s: %d histories, %d expected commitments (%d resolved), %d extracted",
		path, len(f.Histories), m.expected, m.expResolved, m.extracted)
	t.Logf("| measure | value |\n|---|---|\n| extraction precision | %.2f (%d/%d) |\n| extraction recall | %.2f (%d/%d) |\n| kind correct (matched) | %d/%d |\n| owner correct (matched) | %d/%d |\n| status correct (matched) | %.2f (%d/%d) |\n| resolution precision | %.2f (%d/%d) |\n| resolution recall | %.2f (%d/%d) |\n| due date correct | %d/%d |\n| amount correct | %d/%d |",
		m.precision(), m.matchedAny, m.extracted, m.recall(), m.matchedReq, m.expected, m.kindOK, m.matchedReq, m.ownerOK, m.matchedReq,
		m.ratio(m.statusOK, m.matchedReq), m.statusOK, m.matchedReq, m.resP(), m.resolvedCorrectly, m.predResolved,
		m.resR(), m.resolvedCorrectly, m.expResolved, m.dueOK, m.dueN, m.amountOK, m.amountN)
	if len(notes) > 0 {
		t.Logf("differences:\n%s", strings.Join(notes, "\n"))
	}
	for _, c := range []struct {
		name       string
		got, floor float64
	}{
		{"extraction precision", m.precision(), floors[0]},
		{"extraction recall", m.recall(), floors[1]},
		{"resolution precision", m.resP(), floors[2]},
		{"resolution recall", m.resR(), floors[3]},
		{"status accuracy", m.ratio(m.statusOK, m.matchedReq), floors[4]},
	} {
		if c.got < c.floor {
			t.Errorf("%s %.2f below the floor %.2f", c.name, c.got, c.floor)
		}
	}
}

func msgText(h history, id string) string {
	for _, m := range h.Messages {
		if m.ID == id {
			return clip(m.Text, 60)
		}
	}
	return "?"
}

func dueString(d *Due, loc *time.Location) string {
	if d == nil {
		return "none"
	}
	return d.Start.In(loc).Format("2006-01-02 15:04") + " (" + d.Precision + ")"
}
