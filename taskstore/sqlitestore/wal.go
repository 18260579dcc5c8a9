package sqlitestore

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// The write-ahead log grows by every page a commit changes, however small
// the database: a SendMessage changes about fifteen pages (the task's
// rows, the newest end of each index, the ListTasks counters), some 60 KiB
// of log. SQLite moves the log back into the database file (a checkpoint)
// when a commit leaves it longer than wal_autocheckpoint pages, and starts
// it again from the beginning once every reader has moved past it; the
// file keeps its length unless journal_size_limit truncates it. So the log
// is kept in proportion to the volume it lives on (walKeeper):
//
//   - its budget, walBudget, is an eighth of the volume, at most
//     walCheckpointPages pages (about 40 MiB) and at least minWALPages:
//     wal_autocheckpoint is the budget, and journal_size_limit truncates
//     the file back to it after a checkpoint;
//   - the writer checkpoints and truncates the log (wal_checkpoint
//     TRUNCATE) when it has been idle for walIdle after a write, so an idle
//     server's log is empty;
//   - and after a commit, when the log has outgrown twice its budget (a
//     reader held the checkpoint back), when the volume's free space is
//     below twice the budget, or when the commit failed (a full disk):
//     then the log's pages go into the database file while there is room
//     for them, and the file gives its space back to the volume. While
//     free space is short, every commit is followed by a PASSIVE
//     checkpoint (the commit's pages move into the database file, so the
//     next write starts the log again from its beginning, without waiting
//     for a reader), and a TRUNCATE, which waits for readers and gives the
//     file's space back, is paced: once per walCheckEvery, and when idle.
//
// The log's worst size is therefore about twice the budget plus what is
// written in walCheckEvery, unless a read lasts longer than the busy
// timeout (SQLite cannot start the log again under a reader). The
// operations guide states it.

// minWALPages is the smallest WAL budget, in pages, on a small volume.
const minWALPages = 64

// walIdle is how long the writer waits without a write before it
// checkpoints and truncates the log.
const walIdle = time.Second

// walCheckEvery bounds how often the writer looks at the log's size and
// the volume's free space while neither is short (two system calls).
const walCheckEvery = 100 * time.Millisecond

// walBudget returns the WAL budget, in pages, for a volume of total bytes
// (0: not known) and pages of pageSize bytes.
func walBudget(total, pageSize int64) int64 {
	if total <= 0 || pageSize <= 0 {
		return walCheckpointPages
	}
	return min(max(total/8/pageSize, minWALPages), walCheckpointPages)
}

// walKeeper is the writer goroutine's watch over the log (see above).
type walKeeper struct {
	path   string // the -wal file
	dir    string // the directory of the database
	budget int64  // bytes

	dirty   bool      // written since the last checkpoint by the keeper
	short   bool      // the volume's free space was short at the last look
	checked time.Time // the last look
}

func newWALKeeper(dbPath string, budgetPages, pageSize int64) *walKeeper {
	return &walKeeper{path: dbPath + "-wal", dir: filepath.Dir(dbPath), budget: budgetPages * pageSize}
}

// walCheckpoint is what the writer does with the log after a commit.
type walCheckpoint uint8

const (
	walNone     walCheckpoint = iota
	walPassive                // wal_checkpoint(PASSIVE): the log's pages into the file, no wait
	walTruncate               // wal_checkpoint(TRUNCATE): and the log emptied, waiting for readers
)

// needed says, after a commit (or a failed one), how the log should be
// checkpointed now. It looks at the log's size and the free space at most
// once per walCheckEvery: a look that finds either past its bound asks
// for a TRUNCATE; between looks, while the free space was short at the
// last one (on a full disk, say), every commit asks for a PASSIVE
// checkpoint.
func (k *walKeeper) needed(now time.Time) walCheckpoint {
	k.dirty = true
	if now.Sub(k.checked) < walCheckEvery {
		if k.short {
			return walPassive
		}
		return walNone
	}
	k.checked = now
	var size int64
	if fi, err := os.Stat(k.path); err == nil {
		size = fi.Size()
	}
	_, free, ok := volumeSpace(k.dir)
	k.short = ok && free < 2*k.budget
	if k.short || size > 2*k.budget {
		return walTruncate
	}
	return walNone
}

// checkpoint moves the log into the database file and, when no reader
// still uses it, truncates it to nothing (wal_checkpoint(TRUNCATE), which
// waits for readers up to the busy timeout); with passive, it only moves
// what no reader holds back (wal_checkpoint(PASSIVE), no wait). It is the
// one place the store checkpoints by hand. done is false when the
// checkpoint could not finish (a reader held it back past the busy
// timeout, or there was no room to grow the database file): the log is
// then as long as before.
func (s *Store) checkpoint(ctx context.Context, passive bool) (done bool, err error) {
	mode := "TRUNCATE"
	if passive {
		mode = "PASSIVE"
	}
	var busy, logPages, moved int
	err = s.writer.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logPages, &moved)
	return err == nil && busy == 0, err
}

// keepWAL runs on the writer goroutine after each group commit. A
// PASSIVE checkpoint leaves the log dirty: the idle timer still truncates
// it.
func (s *Store) keepWAL() {
	switch s.wal.needed(time.Now()) {
	case walTruncate:
		s.checkpointDirty()
	case walPassive:
		s.checkpoint(context.Background(), true) // a failure: the next look or the idle timer truncates
	}
}

// checkpointDirty checkpoints the log when anything was written since the
// last checkpoint that finished (the writer goroutine calls it when idle,
// too), and reports whether the log is still to be checkpointed.
func (s *Store) checkpointDirty() (dirty bool) {
	if s.wal.dirty {
		if done, _ := s.checkpoint(context.Background(), false); done {
			s.wal.dirty = false
		}
	}
	return s.wal.dirty
}
