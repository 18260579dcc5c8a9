// Package client is Parley's A2A client: it reads an agent card, picks an
// interface by the card's order, and calls the agent over JSON-RPC,
// HTTP+JSON (REST) or gRPC with the same Go API, a2a.Service.
//
//	card, err := client.Resolve(ctx, "https://agent.example.com", nil)
//	c, err := client.New(card, &client.Options{BearerToken: token})
//	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
//
// What it does for the caller:
//
//   - Resolve fetches the card from /.well-known/agent-card.json (or a card
//     URL), checks its REQUIRED members, refuses v0.3 cards with a clear
//     error, and caches it by HTTP rules in a CardCache.
//   - New picks the first interface the client supports (JSONRPC,
//     HTTP+JSON and GRPC by default; Options.Transports restricts them or
//     adds others), falls back to the next when a connection cannot be
//     made, echoes the interface's tenant in every request, and sends
//     A2A-Version: 1.0, A2A-Extensions and credentials on every call (as
//     gRPC metadata on the gRPC binding).
//   - The gRPC transport dials the card's GRPC url, a host:port dial
//     target (or an http:// or https:// URL), over cleartext HTTP/2 unless
//     the URL is https or the HTTP client's transport has a TLS
//     configuration, with connect-go's gRPC protocol.
//   - Errors the server sends are *a2a.Error values on every binding
//     (errors.Is(err, a2a.ErrTaskNotFound)), read from the JSON-RPC error
//     object, the REST error body, or the gRPC status and its ErrorInfo;
//     failures to reach the server are *TransportError values.
//   - Transport failures are retried when that is safe, resending a
//     message with the same messageId (Options.Retries).
//   - Streams are iter.Seq2[a2a.StreamEvent, error]. Breaking out of the
//     loop or canceling the context closes the connection. A task stream
//     that ends before the task settled ends with ErrStreamEnded, and
//     WaitForCompletion follows a task to its end by the best channel.
//
// Answering a task that asked for input (a follow-up: a message whose
// taskId is the task's, see a2a.FollowUp) does not change the task's
// state when the server accepts it. The reply to a follow-up sent with
// returnImmediately still says INPUT_REQUIRED, and so does the first event
// of a follow-up stream, a Task snapshot of the task as the follow-up found
// it; only the events after it are the agent's answer. A loop that asks the
// user whenever it sees INPUT_REQUIRED must skip that snapshot
// (a2a.StreamEvent.Snapshot), or it asks the same question twice.
// WaitForCompletion does this for you: it never returns a state older than
// the last follow-up the same Client sent on the task, and a follow-up
// stream that ends right after its snapshot ends with ErrStreamEnded.
//
// Everything sent leaves the process only to the URLs of the card's
// interfaces (and, for Resolve, the card URL).
package client
