// Package a2a is the A2A v1.0 vocabulary every part of Parley shares: the
// protocol types generated from the proto package lf.a2a.v1, their
// ProtoJSON codec and REQUIRED rules, the Error type and its codes,
// constructors, the Service interface (the eleven operations), the method
// table Methods, and the Invoker and Middleware seam that every binding and
// the client are driven by. It does no I/O. The same generation writes
// package a2aconnect, the connect-go service code.
package a2a

//go:generate bash ../proto/generate.sh
