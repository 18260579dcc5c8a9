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
// The parts: Options, New and Close; Shutdown, the drain before the stop;
// the operations of a2a.Service, each starting with the same checks
// (authentication, protocol version, limits); the Agent API (Agent,
// Request, Emitter), through which an agent's executions emit the events
// of a task; Limits, the bounds on what a request may carry, and the
// per-caller task quotas (Limits.MaxOpenTasks, Limits.TaskRate).
//
// # When an agent's context is canceled
//
// The context given to Agent.Execute ends when the task is canceled
// (context.Cause is ErrCanceled) or when the server stops (Close, or
// Shutdown once its drain is over; the cause is ErrShutdown). A canceled
// task is already CANCELED, and the Emitter refuses further events. On
// shutdown the agent may still emit a final state; a task it leaves
// unfinished ends FAILED with a status message saying the server is
// shutting down. Either way the agent should stop its work and return nil.
// Any non-nil error it returns, ctx.Err() and context.Cause(ctx) included,
// is logged at ERROR level as "agent failed"; it does not change the
// outcome.
//
// # Shutting down with open streams
//
// Shutdown drains: it refuses new messages, lets the executions in
// progress finish until its context is done, then stops the rest as Close
// does (each task still running ends FAILED, and its streams and its
// blocking send get that status). Close stops at once. Either way the
// answers travel through the HTTP side, which must stay up until the core
// has stopped:
//
//  1. Stop accepting: call http.Server.Shutdown (in a goroutine, with a
//     context that outlives step 2). It closes the listeners and waits for
//     the requests in flight; it does not cancel their contexts, so
//     blocking sends and streams go on.
//  2. Call Server.Shutdown (or Close): the tasks settle, and their
//     blocking sends and streams get their answers and end.
//  3. End what is still open: streams of tasks waiting in INPUT_REQUIRED or
//     AUTH_REQUIRED, which have no terminal event to wait for. Give the
//     http.Server a BaseContext and cancel it (ending a stream does not
//     stop its task), or call http.Server.Close. Then close the store.
//
// This is the order `parley serve` uses. Canceling the requests first would
// end streams without their terminal event and fail blocking sends;
// stopping the core before the HTTP side stops accepting would let
// requests still arriving reach a core that refuses them.
package server
