package push

import (
	"context"
	"net/http"

	"parley.dev/parley/taskstore"
)

// Observer watches a Sender's POSTs, for tracing (package telemetry
// implements it). Its methods are called from the delivery goroutines,
// concurrently, and must be quick.
type Observer interface {
	// Attempt is called before each POST of a notification. The context
	// it returns is the attempt's (it may carry a span); end is called
	// once with the attempt's result.
	Attempt(ctx context.Context, n *taskstore.Notification) (_ context.Context, end func(AttemptResult))
	// Header adds headers for the attempt's context to the request, after
	// the notification's own (the W3C traceparent).
	Header(ctx context.Context, h http.Header)
}

// AttemptResult is the result of one POST, as an Observer sees it.
type AttemptResult struct {
	// Delivered: the receiver answered 2xx.
	Delivered bool
	// Retry: the attempt failed and the notification will be tried again
	// unless the configuration is suspended (network error, timeout, 5xx,
	// 429).
	Retry bool
	// Reason says why the attempt failed ("" when delivered); it holds no
	// secret of the configuration.
	Reason string
}

// observe starts observing one attempt; end is never nil.
func (s *Sender) observe(ctx context.Context, n *taskstore.Notification) (context.Context, func(AttemptResult)) {
	if s.opts.Observer == nil {
		return ctx, func(AttemptResult) {}
	}
	return s.opts.Observer.Attempt(ctx, n)
}
