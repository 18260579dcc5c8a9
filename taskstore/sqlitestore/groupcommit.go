package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"time"

	"parley.dev/parley/taskstore/internal/sqlstore"
)

// maxBatch bounds how many operations one group commit takes.
const maxBatch = 256

var errClosed = errors.New("sqlitestore: store is closed")

// prepareGroupCommit prepares the savepoint statements that wrap each
// operation of a batch.
func (s *Store) prepareGroupCommit(p *preparer) {
	s.savepoint = p.command("SAVEPOINT op")
	s.release = p.command("RELEASE op")
	s.rollbackTo = p.command("ROLLBACK TO op")
}

// wtx is the writer's open transaction as one write operation sees it.
// Statements run with the batch's context, not the caller's: interrupting
// a statement would roll back the whole shared transaction, so a caller's
// context is checked only before its operation starts.
type wtx struct {
	tx    *sql.Tx
	stmts map[*sql.Stmt]*sql.Stmt // the transaction's copies, reused within a batch
}

func (w *wtx) stmt(st *sql.Stmt) *sql.Stmt {
	ts, ok := w.stmts[st]
	if !ok {
		ts = w.tx.StmtContext(context.Background(), st)
		w.stmts[st] = ts
	}
	return ts
}

// exec runs a prepared writer statement in the transaction. The context
// argument is ignored (see wtx).
func (w *wtx) exec(_ context.Context, st *sql.Stmt, args ...any) (sql.Result, error) {
	return w.stmt(st).ExecContext(context.Background(), args...)
}

func (w *wtx) queryRow(st *sql.Stmt, args ...any) *sql.Row {
	return w.stmt(st).QueryRowContext(context.Background(), args...)
}

// writeOp is one queued write: fn runs inside the writer's transaction and
// err receives its outcome once that transaction has committed (or failed).
type writeOp struct {
	ctx context.Context
	fn  func(w *wtx) error
	err chan error
}

// write runs fn in a transaction on the writer connection and returns
// only after that transaction has committed. Concurrent calls are grouped:
// the writer goroutine takes every operation waiting, runs each in its own
// savepoint (an operation that fails rolls back only its own changes),
// commits once and then answers them all. A caller's operations run in the
// order of its calls, since each call waits for its answer.
func (s *Store) write(ctx context.Context, fn func(w *wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &writeOp{ctx: ctx, fn: fn, err: make(chan error, 1)}
	select {
	case s.ops <- op:
	case <-s.closing:
		return dialect.Unavailable(errClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once taken, the operation may commit: wait for the outcome whatever
	// the context does, so that an error always means "not written".
	return dialect.Unavailable(<-op.err)
}

// runWriter is the writer goroutine. Between group commits it keeps the
// write-ahead log short (walKeeper).
func (s *Store) runWriter() {
	defer close(s.writerDone)
	batch := make([]*writeOp, 0, maxBatch)
	idle := time.NewTimer(walIdle)
	defer idle.Stop()
	for {
		select {
		case op := <-s.ops:
			batch = append(batch[:0], op)
		case <-idle.C:
			if s.checkpointDirty() {
				idle.Reset(walIdle) // try again
			}
			continue
		case <-s.closing:
			return
		}
		batch = s.gather(batch)
		s.commitBatch(batch, false)
		clear(batch)
		s.keepWAL()
		idle.Reset(walIdle)
	}
}

// gather adds the operations waiting to batch, up to maxBatch. It first
// lets the goroutines that are ready to run (the callers just answered,
// say) queue their next operations, and repeats while that brings more;
// without this, on a busy processor the writer would run each operation
// alone as soon as it arrives.
func (s *Store) gather(batch []*writeOp) []*writeOp {
	for n := -1; n != len(batch) && len(batch) < maxBatch; {
		n = len(batch)
		runtime.Gosched()
	more:
		for len(batch) < maxBatch {
			select {
			case op := <-s.ops:
				batch = append(batch, op)
			default:
				break more
			}
		}
	}
	return batch
}

// commitBatch runs the operations in one transaction and answers each.
// The first run (savepoints false) runs them one after the other without
// savepoints (two statements per operation saved): an operation that
// fails with taskstore.ErrExists, ErrNotFound or ErrSeq has written
// nothing (every operation returns those before its first write), so the
// others can still commit. Any other failure rolls the transaction back
// and, when the batch holds other operations, runs it again with each
// operation in its own savepoint (runInSavepoint), so that the failing
// one loses only its own changes. Operations must therefore be safe to
// run twice: they set, rather than add to, what they report.
func (s *Store) commitBatch(batch []*writeOp, savepoints bool) {
	errs := make([]error, len(batch))
	tx, w, err := s.begin()
	if err != nil {
		answerAll(batch, err)
		return
	}
	for i, op := range batch {
		if errs[i] = op.ctx.Err(); errs[i] != nil {
			continue
		}
		if savepoints {
			if errs[i], err = s.runInSavepoint(w, op); err != nil {
				// The transaction is no longer usable (SQLite may have
				// rolled it back): nothing in the batch is written.
				tx.Rollback()
				answerAll(batch, err)
				return
			}
			continue
		}
		if errs[i] = op.fn(w); errs[i] != nil && !sqlstore.Clean(errs[i]) {
			tx.Rollback()
			if len(batch) == 1 {
				op.err <- errs[i]
				return
			}
			s.commitBatch(batch, true)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		answerAll(batch, err)
		return
	}
	for i, op := range batch {
		op.err <- errs[i]
	}
}

// begin starts the writer's transaction.
func (s *Store) begin() (*sql.Tx, *wtx, error) {
	tx, err := s.writer.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, nil, err
	}
	return tx, &wtx{tx: tx, stmts: make(map[*sql.Stmt]*sql.Stmt, 8)}, nil
}

// answerAll gives every operation of the batch the same outcome.
func answerAll(batch []*writeOp, err error) {
	for _, op := range batch {
		op.err <- err
	}
}

// runInSavepoint runs one operation of a batch in its own savepoint,
// rolling back to it when the operation fails. It returns the operation's
// error and, separately, an error of the savepoint statements themselves,
// after which the transaction must be abandoned.
func (s *Store) runInSavepoint(w *wtx, op *writeOp) (opErr, txErr error) {
	bg := context.Background()
	if _, err := w.exec(bg, s.savepoint); err != nil {
		return nil, err
	}
	opErr = op.fn(w)
	end := s.release
	if opErr != nil {
		end = s.rollbackTo
	}
	if _, err := w.exec(bg, end); err != nil {
		return opErr, err
	}
	if opErr != nil {
		// ROLLBACK TO keeps the savepoint open; release it too.
		if _, err := w.exec(bg, s.release); err != nil {
			return opErr, err
		}
	}
	return opErr, nil
}
