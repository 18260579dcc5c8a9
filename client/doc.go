// Package client is Parley's A2A client: it reads an agent card, picks an
// interface by the card's order, and calls the agent over JSON-RPC or
// HTTP+JSON (REST) with the same Go API, a2a.Service.
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
//     HTTP+JSON, and any Transport added through Options.Transports, such
//     as a future gRPC one), falls back to the next when a connection
//     cannot be made, echoes the interface's tenant in every request, and
//     sends A2A-Version: 1.0, A2A-Extensions and credentials on every call.
//   - Errors the server sends are *a2a.Error values on every binding
//     (errors.Is(err, a2a.ErrTaskNotFound)); failures to reach the server
//     are *TransportError values.
//   - Transport failures are retried when that is safe, resending a
//     message with the same messageId (Options.Retries).
//   - Streams are iter.Seq2[a2a.StreamEvent, error]. Breaking out of the
//     loop or canceling the context closes the connection. A task stream
//     that ends before the task settled ends with ErrStreamEnded, and
//     WaitForCompletion follows a task to its end by the best channel.
//
// Everything sent leaves the process only to the URLs of the card's
// interfaces (and, for Resolve, the card URL).
package client
