package server

// DigestOf is digestOf, for tests that write a message's idempotency
// record themselves.
var DigestOf = digestOf
