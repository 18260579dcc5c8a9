package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recorder is a span exporter that keeps the batches it is given.
type recorder struct {
	mu       sync.Mutex
	batches  [][]string
	shutdown bool
	got      chan struct{}
}

func (r *recorder) export(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	r.mu.Lock()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	r.batches = append(r.batches, names)
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
	return nil
}

func (r *recorder) Shutdown(context.Context) error {
	r.mu.Lock()
	r.shutdown = true
	r.mu.Unlock()
	return nil
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n []int
	for _, b := range r.batches {
		n = append(n, len(b))
	}
	return n
}

// spans ends n sampled spans through the batcher.
func spans(t *testing.T, b *batcher, n int) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	for range n {
		_, s := tp.Tracer("test").Start(context.Background(), "s")
		s.End()
	}
}

// A full batch is exported at once, long before the schedule delay; the
// rest waits for a flush, in order, in batches no larger than the maximum.
func TestBatcherExportsFullBatches(t *testing.T) {
	r := &recorder{got: make(chan struct{}, 1)}
	b := newBatcher(r, env("OTEL_BSP_SCHEDULE_DELAY", "600000", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4"))
	defer b.Shutdown(context.Background())
	spans(t, b, 6)
	select {
	case <-r.got:
	case <-time.After(5 * time.Second):
		t.Fatal("a full batch was not exported")
	}
	if err := b.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r.sizes()
	total := 0
	for _, n := range got {
		if n > 4 {
			t.Errorf("a batch of %d spans, the maximum is 4", n)
		}
		total += n
	}
	if total != 6 {
		t.Errorf("exported %v, want 6 spans in all", got)
	}
}

// Past the queue's size spans are dropped and counted; Shutdown exports
// the rest and shuts the exporter down.
func TestBatcherDropsWhenFullAndFlushesAtShutdown(t *testing.T) {
	r := &recorder{got: make(chan struct{}, 1)}
	b := newBatcher(r, env("OTEL_BSP_SCHEDULE_DELAY", "600000", "OTEL_BSP_MAX_QUEUE_SIZE", "3", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "100"))
	// newBatcher caps the batch at the queue's size, so the third span
	// would wake the exporter; lift the cap so that nothing is exported
	// before Shutdown and the queue stays full.
	b.mu.Lock()
	b.maxBatch = 100
	b.mu.Unlock()
	spans(t, b, 5)
	if d := b.Dropped(); d != 2 {
		t.Errorf("dropped %d spans, want 2", d)
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.sizes(); len(got) != 1 || got[0] != 3 || !r.shutdown {
		t.Errorf("after Shutdown: batches %v, exporter shut down %v; want one batch of 3", got, r.shutdown)
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
}

// Unsampled spans are not queued.
func TestBatcherSkipsUnsampled(t *testing.T) {
	r := &recorder{got: make(chan struct{}, 1)}
	b := newBatcher(r, env())
	stub := tracetest.SpanStub{Name: "unsampled"}.Snapshot()
	b.OnEnd(stub)
	b.Shutdown(context.Background())
	if got := r.sizes(); len(got) != 0 {
		t.Errorf("exported %v", got)
	}
}
