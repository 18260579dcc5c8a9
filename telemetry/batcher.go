package telemetry

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batcher is the span processor in front of the exporter: ended spans are
// appended to a buffer under a lock, and a goroutine exports the buffer
// every schedule delay, or as soon as a batch is full. It does what the
// SDK's batch span processor does, with one difference that matters on a
// busy server: ending a span does not wake the exporting goroutine (the
// SDK's sends every span on a channel its goroutine waits on, a
// goroutine switch per span), which measured as a good part of tracing's
// cost per request. It reads the standard OTEL_BSP_* variables.
type batcher struct {
	exp      spanExporter
	delay    time.Duration // OTEL_BSP_SCHEDULE_DELAY
	timeout  time.Duration // OTEL_BSP_EXPORT_TIMEOUT
	maxQueue int           // OTEL_BSP_MAX_QUEUE_SIZE: more spans waiting are dropped
	maxBatch int           // OTEL_BSP_MAX_EXPORT_BATCH_SIZE

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	dropped uint64
	closed  bool // shut down: spans ended afterwards are not exported

	exporting sync.Mutex    // one export at a time, in order
	full      chan struct{} // a batch is ready
	stop      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
}

// spanExporter is what the batcher hands its batches to (the exporter).
type spanExporter interface {
	export(ctx context.Context, spans []sdktrace.ReadOnlySpan) error
	Shutdown(ctx context.Context) error
}

// newBatcher starts a batcher for exp, configured by getenv.
func newBatcher(exp spanExporter, getenv func(string) string) *batcher {
	ms := func(name string, def int) time.Duration {
		return time.Duration(envInt(getenv, name, def)) * time.Millisecond
	}
	b := &batcher{
		exp: exp, delay: ms("OTEL_BSP_SCHEDULE_DELAY", 5000), timeout: ms("OTEL_BSP_EXPORT_TIMEOUT", 30000),
		maxQueue: envInt(getenv, "OTEL_BSP_MAX_QUEUE_SIZE", 2048), maxBatch: envInt(getenv, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
		full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	b.maxBatch = min(b.maxBatch, b.maxQueue)
	go b.loop()
	return b
}

// envInt reads a positive integer variable, or returns def.
func envInt(getenv func(string) string, name string, def int) int {
	if n, err := strconv.Atoi(getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// OnStart implements sdktrace.SpanProcessor.
func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) { b.add(s) }

// add queues an ended span if it is sampled, or drops it (and counts it)
// when the queue is full.
func (b *batcher) add(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	if len(b.queue) >= b.maxQueue {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	ready := len(b.queue) == b.maxBatch
	b.mu.Unlock()
	if ready {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

// loop exports every delay, or when a batch is full, until stopped.
func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTicker(b.delay)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.full:
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		b.export(ctx)
		cancel()
	}
}

// export sends what is queued, in batches of at most maxBatch.
func (b *batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	var errs []error
	for {
		b.mu.Lock()
		n := min(len(b.queue), b.maxBatch)
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		if len(b.queue) == 0 {
			b.queue = nil // let the backing array go
		}
		b.mu.Unlock()
		if n == 0 {
			return errors.Join(errs...)
		}
		if err := b.exp.export(ctx, batch); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
}

// ForceFlush implements sdktrace.SpanProcessor: it exports what is queued
// now.
func (b *batcher) ForceFlush(ctx context.Context) error { return b.export(ctx) }

// Shutdown implements sdktrace.SpanProcessor: it stops the loop, exports
// what is left and shuts the exporter down.
func (b *batcher) Shutdown(ctx context.Context) error {
	var err error
	b.stopOnce.Do(func() {
		close(b.stop)
		<-b.done
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		err = errors.Join(b.export(ctx), b.exp.Shutdown(ctx))
	})
	return err
}

// Dropped returns how many spans were dropped because the queue was full.
func (b *batcher) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}
