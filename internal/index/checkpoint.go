package index

import (
	"context"
	"sync"
	"time"
)

// backgroundCheckpoints moves WAL checkpoints off the write connection for
// the duration of a bulk write: the writer stops checkpointing
// (wal_autocheckpoint = 0) and a connection of its own copies committed
// frames into the database every walCheckpointEvery (PASSIVE: it never waits
// for or blocks the writer). On two cores the copying then overlaps the
// writer's work instead of adding to it (1.5 s of the 1M bulk load's
// write path). The WAL stays small: a passive checkpoint that has caught
// up lets the writer's next transaction restart the log from its start.
// stop restores automatic checkpoints on the writer and closes the
// checkpointer; a failure to set things up leaves the writer checkpointing
// as before.
func (ix *Index) backgroundCheckpoints(ctx context.Context) (stop func()) {
	noop := func() {}
	if ix.wdb == nil {
		return noop
	}
	ck, err := openDB(ix.path, false, 1, 256)
	if err != nil {
		ix.log.Debug("background checkpoints unavailable", "err", err)
		return noop
	}
	if _, err := ix.wdb.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		ck.Close()
		return noop
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(walCheckpointEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := ck.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
					ix.log.Debug("background checkpoint", "err", err)
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		ck.Close()
		c := context.WithoutCancel(ctx)
		if _, err := ix.wdb.ExecContext(c, "PRAGMA wal_autocheckpoint = 1000"); err != nil {
			ix.log.Warn("restore WAL checkpoints", "err", err)
		}
	}
}

// walCheckpointEvery is the background checkpointer's period: about one
// bulk batch.
const walCheckpointEvery = 50 * time.Millisecond
