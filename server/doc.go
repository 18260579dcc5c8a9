// Package server is Parley's A2A core, free of any wire format: Server
// implements the eleven operations of a2a.Service with the semantics of the
// specification and runs the user's Agent behind them. It owns every rule:
// validation, protocol versions, capability gates, idempotent resends,
// per-caller scoping, the task lifecycle and the fan-out of task events to
// streams and push notifications.
//
// The bindings (packages jsonrpc, rest and grpcbind) only translate between
// their wire format and a2a.Service, so every binding behaves the same.
//
// Where things live: server.go (Options, New, Close), call.go (the checks
// every operation starts with), accept.go and send.go (SendMessage and
// SendStreamingMessage), tasks.go and pushconfig.go (the other operations),
// run.go, execution.go and events.go (the live state of a task, the agent's
// executions and the events it emits), agent.go (the Agent API), limits.go
// (Limits: the bounds on what a request may carry) and quota.go (the
// per-caller task quotas).
//
// # When an agent's context is canceled
//
// The context given to Agent.Execute ends when the task is canceled
// (context.Cause is ErrCanceled) or when Close stops the server (the cause is
// ErrShutdown). A canceled task is already CANCELED, and the Emitter refuses
// further events. On shutdown the agent may still emit a final state; a task
// it leaves unfinished ends FAILED with a status message saying the server
// shut down. Either way the agent should stop its work and return nil. Any
// non-nil error it returns, ctx.Err() and context.Cause(ctx) included, is
// logged at ERROR level as "agent failed"; it does not change the outcome.
//
// # Shutting down with open streams
//
// Stop the HTTP side first, then the core:
//
//  1. End the requests still open. http.Server.Shutdown does not cancel the
//     context of a request in flight and waits for it to finish, and a
//     stream (SendStreamingMessage, SubscribeToTask) only ends when its task
//     does or when its request's context ends. Give the http.Server a
//     BaseContext and cancel it, or Shutdown waits for its deadline. Ending a
//     stream does not stop its task.
//  2. Call http.Server.Shutdown, so no new call reaches the core.
//  3. Call Server.Close: running agents see their context canceled with
//     cause ErrShutdown, Close waits for them up to its context's deadline,
//     and the tasks they leave unfinished end FAILED. Then close the store.
//
// This is the order `parley serve` uses. Closing the core first would leave
// requests that are still arriving to run agents whose context is already
// canceled.
package server
