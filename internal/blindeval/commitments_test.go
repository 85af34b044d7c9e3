package blindeval

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/dossier/dossiereval"
)

// commitmentFloors are the least each commitment figure may score on the
// blind set e1 (testdata/README.md §4): a little below the figures after
// the issue 21 tuning (docs/dossier.md "Evaluation"). Never exact values.
var commitmentFloors = map[string]map[string]float64{
	// After tuning: P 0.97, R 0.94, status 0.68, resolution P 0.86 / R 0.38.
	"dev": {"precision": 0.94, "recall": 0.90, "status": 0.65, "resolution P": 0.80, "resolution R": 0.35},
	// Scored once after tuning: P 0.81, R 0.84, status 0.67, resolution
	// P 0.50 (1/2) / R 0.09.
	"heldout": {"precision": 0.78, "recall": 0.80, "status": 0.62, "resolution P": 0.45, "resolution R": 0.05},
}

// TestBlindCommitments scores the dossier's commitment extraction on the
// blind set with the matcher of internal/dossier's
// TestCommitmentEvaluation (internal/dossier/dossiereval) and prints the
// figures of docs/dossier.md "Evaluation". Per-commitment differences quote
// the messages, so they are printed only for dev and only on request.
func TestBlindCommitments(t *testing.T) {
	for _, half := range halves() {
		t.Run(half, func(t *testing.T) {
			set, err := dossiereval.Load(filepath.Join("testdata", half, "commitments.json"))
			if err != nil {
				t.Fatal(err)
			}
			m, notes, err := dossiereval.Score(set)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("blind commitments, %s half: %d histories, %d expected (%d resolved), %d extracted\n%s\n%s",
				half, m.Histories, m.Expected, m.ExpResolved, m.Extracted, m.Summary(), m.Table())
			if detail(half) && len(notes) > 0 {
				t.Logf("differences:\n%s", strings.Join(notes, "\n"))
			}
			got := map[string]float64{
				"precision":    m.Precision(),
				"recall":       m.Recall(),
				"status":       m.StatusAccuracy(),
				"resolution P": m.ResolutionPrecision(),
				"resolution R": m.ResolutionRecall(),
			}
			for k, floor := range commitmentFloors[half] {
				v, ok := got[k]
				if !ok {
					t.Errorf("floor on unknown measure %q", k)
					continue
				}
				if v < floor {
					t.Errorf("%s: commitment %s = %.3f, below its floor %.3f", half, k, v, floor)
				}
			}
		})
	}
}
