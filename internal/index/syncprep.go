package index

import "context"

// prepareSync runs at the start of every Sync, under writeMu, before any
// source is read: one-time rewrites of rows stored by older versions
// (codes.go). The returned function runs when the sync ends.
func (ix *Index) prepareSync(ctx context.Context) (release func(), err error) {
	if err := ix.maskStoredCodes(ctx); err != nil {
		return nil, err
	}
	return func() {}, nil
}
