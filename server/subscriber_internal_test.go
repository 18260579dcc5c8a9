package server

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// fakeLog is a task's event log of n events, numbered 1 to n, that counts
// its reads; pruned makes every read fail as a pruned log does.
type fakeLog struct {
	mu     sync.Mutex
	n      uint64
	reads  int
	pruned bool
}

func (l *fakeLog) read(_ context.Context, after uint64, limit int) ([]a2a.StreamEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if l.pruned {
		return nil, taskstore.ErrPruned
	}
	var evs []a2a.StreamEvent
	for seq := after + 1; seq <= l.n && len(evs) < limit; seq++ {
		evs = append(evs, chunkEvent(seq))
	}
	return evs, nil
}

func (l *fakeLog) readCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads
}

func (s *subscriber) stillBehind() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.behind
}

func chunkEvent(seq uint64) a2a.StreamEvent {
	return a2a.StreamEvent{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{
		ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{Artifact: a2a.TextArtifact("a", "x"), Append: seq > 1}}}}
}

// TestSubscriberBehind: a subscriber offered more events than its limit
// queues no more than the limit, then reads the rest from the log, and
// takes live events again once it has caught up: every event once, in
// order, with no gap where it switched back.
func TestSubscriberBehind(t *testing.T) {
	const limit, published = 4, 1000
	log := &fakeLog{n: published}
	sub := newSubscriber(0, "t", log.read)
	for seq := uint64(1); seq <= published; seq++ {
		sub.offer(chunkEvent(seq), limit)
		if n := len(sub.queue); n > limit {
			t.Fatalf("after event %d the queue holds %d events; limit %d", seq, n, limit)
		}
	}
	seqs := make(chan uint64, published+2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(context.Background(), sub, nil, false, func(ev a2a.StreamEvent, err error) bool {
			if err != nil {
				t.Errorf("after %d events: %v", len(seqs), err)
				return false
			}
			if ev.Seq == published {
				// Published while it catches up: read from the log too.
				log.mu.Lock()
				log.n++
				log.mu.Unlock()
				sub.offer(chunkEvent(published+1), limit)
			}
			seqs <- ev.Seq
			return true
		})
	}()
	for want := uint64(1); want <= published+1; want++ {
		if got := <-seqs; got != want {
			t.Fatalf("event %d has seq %d", want, got)
		}
	}
	// Caught up: what is published now is queued, not read from the log.
	for sub.stillBehind() {
		runtime.Gosched()
	}
	reads := log.readCount()
	sub.offer(chunkEvent(published+2), limit)
	if got := <-seqs; got != published+2 {
		t.Fatalf("live event has seq %d; want %d", got, published+2)
	}
	sub.close(nil)
	<-done
	if want := (published-limit+resumePage-1)/resumePage + 1; reads != want || log.readCount() != reads {
		t.Errorf("%d reads of the log, then %d; want %d pages, then none", reads, log.readCount(), want)
	}
	// An event offered again after the reader got it from the log is dropped.
	if sub.offer(chunkEvent(3), limit); len(sub.take(nil).evs) != 0 {
		t.Errorf("a replayed event was queued again")
	}
}

// TestSubscriberBehindPruned: a subscriber whose missed events are gone
// from the log ends with an UnavailableError naming the last event it got,
// where a resume picks up.
func TestSubscriberBehindPruned(t *testing.T) {
	log := &fakeLog{n: 10, pruned: true}
	sub := newSubscriber(0, "t", log.read)
	for seq := uint64(1); seq <= 10; seq++ {
		sub.offer(chunkEvent(seq), 2)
	}
	var got []uint64
	var end error
	pump(context.Background(), sub, nil, false, func(ev a2a.StreamEvent, err error) bool {
		if err != nil {
			end = err
			return false
		}
		got = append(got, ev.Seq)
		return true
	})
	var ae *a2a.Error
	if len(got) != 2 || !errors.As(end, &ae) || ae.Code != a2a.CodeUnavailable || ae.Metadata["lastEventId"] != "2" {
		t.Fatalf("events %v then %v; want 1 and 2, then UnavailableError with lastEventId 2", got, end)
	}
}
