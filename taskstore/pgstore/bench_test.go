package pgstore

import (
	"fmt"
	"testing"

	"parley.dev/parley/a2a"

	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore/storetest"
)

// BenchmarkConcurrentWrites has many goroutines each create a task and
// append three events to it, the write pattern of a blocking SendMessage
// (see storetest.BenchSendMessage; one operation is one whole task).
func BenchmarkConcurrentWrites(b *testing.B) {
	s := openFresh(b, pgtest.NewDatabase(b), nil)
	defer s.Close()
	storetest.BenchSendMessage(b, s)
}

// BenchmarkSendMessageBatched writes the tasks of blocking SendMessages
// in the batches the server makes (storetest.BenchSendMessageBatched).
func BenchmarkSendMessageBatched(b *testing.B) {
	s := openFresh(b, pgtest.NewDatabase(b), nil)
	defer s.Close()
	storetest.BenchSendMessageBatched(b, s)
}

// BenchmarkStreamBatched writes 20-chunk streams in the batches the server
// makes (storetest.BenchStreamBatched; one operation is one stream).
func BenchmarkStreamBatched(b *testing.B) {
	s := openFresh(b, pgtest.NewDatabase(b), nil)
	defer s.Close()
	storetest.BenchStreamBatched(b, s)
}

// BenchmarkAppendChunk appends chunk 10 (to 20) and chunk 10,000 (to
// 20,000) of one artifact: the cost must be the same.
func BenchmarkAppendChunk(b *testing.B) {
	db := pgtest.NewDatabase(b)
	for _, at := range []int{10, 10000} {
		b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
			s := openFresh(b, db, nil)
			defer s.Close()
			storetest.BenchAppendChunk(b, s, at)
		})
	}
}

// BenchmarkConcurrentWritesScale is BenchmarkConcurrentWrites in a scope
// that already holds 1,000 or 100,000 finished tasks, each in a context
// of its own (so as many ListTasks counters), not yet analyzed (as in a
// database's first minute): the cost of a write must not grow with them.
func BenchmarkConcurrentWritesScale(b *testing.B) {
	db := pgtest.NewDatabase(b)
	for _, n := range []int{1000, 100000} {
		s := openFresh(b, db, nil)
		defer s.Close()
		// Rows of storetest's scope, made in SQL for speed (a thousand
		// per transaction: the trigger updates the same counters for
		// each, and their versions pile up within a transaction); the
		// trigger counts them as any other.
		for from := 1; from <= n; from += 1000 {
			if _, err := s.pool.Exec(b.Context(), `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ms, data)
				SELECT 'fill-' || g, 't1', 'alice', 'fill-ctx-' || g, $3, g, ''::bytea FROM generate_series($1::int, $2::int) AS g`,
				from, min(from+999, n), int32(a2a.TaskState_TASK_STATE_COMPLETED)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) { storetest.BenchSendMessage(b, s) })
	}
}

// BenchmarkLongStreams writes streams of 200, 2,000 and 10,000 chunks and
// reads each back once finished (storetest.BenchLongStreams; one
// operation is one chunk): the cost per chunk must be the same.
func BenchmarkLongStreams(b *testing.B) {
	db := pgtest.NewDatabase(b)
	for _, chunks := range []int{200, 2000, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			s := openFresh(b, db, nil)
			defer s.Close()
			storetest.BenchLongStreams(b, s, chunks)
		})
	}
}
