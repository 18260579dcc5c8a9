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
package server
