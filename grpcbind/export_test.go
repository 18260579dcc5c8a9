package grpcbind

// StatusError exposes statusError, a client's reading of a status, to the
// tests of this package.
var StatusError = statusError
