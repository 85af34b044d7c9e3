package dossier_test

import (
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/dossier/dossiereval"
)

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
// on the labelled histories (the matcher is internal/dossier/dossiereval,
// shared with the blind set of internal/blindeval). Run with -v for the
// table and every miss.
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
	set, err := dossiereval.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m, notes, err := dossiereval.Score(set)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d histories, %d expected commitments (%d resolved), %d extracted",
		path, m.Histories, m.Expected, m.ExpResolved, m.Extracted)
	t.Logf("%s", m.Table())
	if len(notes) > 0 {
		t.Logf("differences:\n%s", strings.Join(notes, "\n"))
	}
	for _, c := range []struct {
		name       string
		got, floor float64
	}{
		{"extraction precision", m.Precision(), floors[0]},
		{"extraction recall", m.Recall(), floors[1]},
		{"resolution precision", m.ResolutionPrecision(), floors[2]},
		{"resolution recall", m.ResolutionRecall(), floors[3]},
		{"status accuracy", m.StatusAccuracy(), floors[4]},
	} {
		if c.got < c.floor {
			t.Errorf("%s %.2f below the floor %.2f", c.name, c.got, c.floor)
		}
	}
}
