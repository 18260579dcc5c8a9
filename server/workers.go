package server

import (
	"context"
	"time"
)

// workerIdle is how long a worker goroutine waits for its next job before
// it ends.
const workerIdle = 5 * time.Second

// workers runs the server's jobs (agent executions, pipelined writes) on
// goroutines that outlive one job. A new goroutine starts with a small
// stack and grows it, copying it each time, as the job calls deeper
// (validation, the store, protobuf encoding): with 64 clients on the memory
// store that copying was 6 % of the server's CPU. A worker keeps the stack
// its first jobs grew, at the cost of that memory while it waits. A job
// that ends its goroutine (runtime.Goexit) ends its worker only.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only to a waiting worker
	done <-chan struct{}
}

// newWorkers returns workers whose waiting ends when ctx is done.
func newWorkers(ctx context.Context) *workers {
	return &workers{jobs: make(chan func()), done: ctx.Done()}
}

// run runs f on a waiting worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.work(f)
	}
}

// work runs f, then the jobs it is given until it has waited workerIdle
// for one, or the server stopped.
func (w *workers) work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.jobs:
		case <-idle.C:
			return
		case <-w.done:
			return
		}
	}
}
