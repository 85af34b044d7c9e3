package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// prefitState is a Fitter state computed ahead of the embedding pass
// (startPrefit) for a corpus of docs messages.
type prefitState struct {
	docs  int64
	epoch int64 // fitEpochKey when the corpus was read
	state []byte
}

// startPrefit fits a Fitter embedder in the background when the first
// embedding pass would fit it: a bulk load starts it once every row is
// stored, so the fit (reading and learning from every text) runs on the
// core the single-threaded secondary-index build leaves idle. The result
// is kept for the embedding pass (fitState); the embedder itself holds the
// fitted model from then on, exactly as if the pass had fitted it.
func (ix *Index) startPrefit(ctx context.Context) {
	f, ok := ix.opts.Embedder.(Fitter)
	if !ok || ix.wdb == nil {
		return
	}
	ix.bg.Add(1)
	go func() {
		defer ix.bg.Done()
		ix.embedMu.Lock()
		defer ix.embedMu.Unlock()
		epoch, err := getMetaInt(ctx, ix.rdb, fitEpochKey)
		if err != nil {
			return
		}
		fit, docs, err := ix.fitDue(ctx, f)
		if err != nil || !fit {
			return
		}
		state, err := ix.fitCompute(ctx, f)
		if err != nil {
			// The model may be half-fitted: no stored state matches it
			// any more, so the pass restores or fits it again.
			ix.embRestored = -1
			return
		}
		ix.prefit = &prefitState{docs: docs, epoch: epoch, state: state}
	}()
}

// fitState returns the Fitter's state fitted over docs messages and the
// fit epoch (fitEpochKey) it read the corpus under: the background fit's
// when it covered exactly these, otherwise a fit now under epoch. Callers
// hold embedMu.
func (ix *Index) fitState(ctx context.Context, f Fitter, docs, epoch int64) ([]byte, int64, error) {
	pre := ix.prefit
	ix.prefit = nil
	if pre != nil && pre.docs == docs {
		return pre.state, pre.epoch, nil
	}
	state, err := ix.fitCompute(ctx, f)
	return state, epoch, err
}

// fitCompute fits f over the searchable texts and returns its state.
func (ix *Index) fitCompute(ctx context.Context, f Fitter) ([]byte, error) {
	// A read that fails part-way fails the fit: a state fitted on some of
	// the texts must not be saved as if it covered them all.
	var readErr error
	docsFn := func(yield func(string) bool) {
		err := eachRow(ix.rdb.QueryContext(ctx, "SELECT text, search_extra FROM messages WHERE searchable = 1"))(func(r *sql.Rows) error {
			var t string
			var e sql.NullString
			if err := r.Scan(&t, &e); err != nil {
				return err
			}
			if !yield(indexText(t, e.String)) {
				return errStopRows
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopRows) && readErr == nil {
			readErr = err
		}
	}
	if err := f.Fit(ctx, docsFn); err != nil {
		return nil, fmt.Errorf("fit embedder: %w", err)
	}
	if readErr != nil {
		return nil, fmt.Errorf("fit embedder: read texts: %w", readErr)
	}
	state, err := f.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("save embedder state: %w", err)
	}
	return state, nil
}
