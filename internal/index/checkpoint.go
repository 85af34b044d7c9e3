package index

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// bgCheckpointer moves WAL checkpoints off the write connection for the
// duration of a bulk write: the writer stops checkpointing
// (wal_autocheckpoint = 0) and a connection of its own copies committed
// frames into the database after every batch (PASSIVE: it never waits
// for or blocks the writer). On two cores the copying overlaps the
// writer's next batch instead of adding to it (1.5 s of the write path of
// a 1M-message bulk load).
//
// The log restarts from its start only when a write transaction begins
// with every frame copied, which a concurrent checkpoint rarely achieves;
// so once the log passes walRestartFrames the writer catches up itself
// between two transactions (the remainder is small) and the log restarts.
type bgCheckpointer struct {
	ix     *Index
	db     *sql.DB
	kicks  chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	frames atomic.Int64 // frames in the log at the last checkpoint
}

// bulkEmbed is the number of vectors to write from which an embedding
// pass checkpoints in the background.
const bulkEmbed = 50000

// walRestartFrames is the log size (4 KiB frames: 32 MiB) past which the
// writer restarts the log (see bgCheckpointer).
const walRestartFrames = 8192

// backgroundCheckpoints starts a checkpointer; nil when one cannot be set
// up (the writer then checkpoints as before). Stop it with stop.
func (ix *Index) backgroundCheckpoints(ctx context.Context) *bgCheckpointer {
	if ix.wdb == nil {
		return nil
	}
	db, err := openDB(ix.path, false, 1, 256)
	if err != nil {
		ix.log.Debug("background checkpoints unavailable", "err", err)
		return nil
	}
	if _, err := ix.wdb.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		db.Close()
		return nil
	}
	c := &bgCheckpointer{ix: ix, db: db, kicks: make(chan struct{}, 1), done: make(chan struct{})}
	c.wg.Add(1)
	go c.run()
	return c
}

func (c *bgCheckpointer) run() {
	defer c.wg.Done()
	// A tick as well as kicks: a long transaction (the index build)
	// spills frames before it commits.
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.kicks:
		case <-t.C:
		}
		var busy, log, done int64
		if err := c.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
			c.ix.log.Debug("background checkpoint", "err", err)
			continue
		}
		c.frames.Store(log)
	}
}

// kick asks for a checkpoint now (a batch has committed).
func (c *bgCheckpointer) kick() {
	if c == nil {
		return
	}
	select {
	case c.kicks <- struct{}{}:
	default:
	}
}

// between runs between two write transactions on the writer: when the log
// has grown past walRestartFrames it copies what is left so the next
// transaction restarts the log.
func (c *bgCheckpointer) between(ctx context.Context) {
	if c == nil || c.frames.Load() < walRestartFrames {
		return
	}
	if _, err := c.ix.wdb.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		c.ix.log.Debug("checkpoint", "err", err)
		return
	}
	c.frames.Store(0)
}

// stop ends background checkpoints and restores automatic ones on the
// writer.
func (c *bgCheckpointer) stop(ctx context.Context) {
	if c == nil {
		return
	}
	close(c.done)
	c.wg.Wait()
	c.db.Close()
	if _, err := c.ix.wdb.ExecContext(context.WithoutCancel(ctx), "PRAGMA wal_autocheckpoint = 1000"); err != nil {
		c.ix.log.Warn("restore WAL checkpoints", "err", err)
	}
}
