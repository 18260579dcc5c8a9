package pgstore

import (
	"fmt"
	"testing"

	"parley.dev/parley/taskstore/pgstore/pgtest"
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
