package index

import "context"

// prepareSync runs at the start of every Sync, under writeMu, before any
// source is read. It pins the read policy for the whole sync (a policy that
// cannot be loaded fails the sync with ErrPolicyUnavailable, changing
// nothing), purges what a changed policy blocks and resets the watermarks
// so threads it now allows are read again (purge.go), and does one-time
// rewrites of rows stored by older versions (codes.go). release, run when
// the sync ends (still under writeMu), scrubs what the sync purged and
// unpins the policy.
func (ix *Index) prepareSync(ctx context.Context) (release func(), err error) {
	fp, unpin, err := ix.pinPolicy()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			unpin()
		}
	}()
	if fp != "" {
		stored, err := getMetaString(ctx, ix.wdb, policyFPKey)
		if err != nil {
			return nil, err
		}
		if stored != fp {
			if _, err := ix.purgeBlockedLocked(ctx); err != nil {
				return nil, err
			}
			if err := ix.notePolicyLocked(ctx, fp); err != nil {
				return nil, err
			}
		}
	}
	if err := ix.maskStoredCodes(ctx); err != nil {
		return nil, err
	}
	// A scrub a crash interrupted.
	if err := ix.finishPurgeLocked(ctx); err != nil {
		return nil, err
	}
	return func() {
		// Threads the sync purged (blocked ones) are scrubbed before the
		// sync returns; on failure the flag stays and the next write
		// finishes it.
		if err := ix.finishPurgeLocked(context.WithoutCancel(ctx)); err != nil {
			ix.log.Error("scrub after purge", "err", err)
		}
		unpin()
	}, nil
}
