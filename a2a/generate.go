// Package a2a is the A2A v1.0 vocabulary every part of Parley shares: the
// protocol types generated from the proto package lf.a2a.v1, their
// ProtoJSON codec and REQUIRED rules, the Error type and its codes,
// constructors, the Service interface (the eleven operations), the method
// table (Methods, MethodByName), and the Invoker and Middleware seam that every binding and
// the client are driven by. It does no I/O. The same generation writes
// package a2aconnect, the connect-go service code.
//
// It is the wire model only, and holds no state an importer could change:
// the error sentinels (ErrTaskNotFound, ...) are constants matched by code
// (spec §3.3.2, §5.4), and the method table is read through Methods and
// MethodByName. How a transport carries a stream (the wait between its
// events, resuming it after an event) belongs to packages server and
// client (server.Idler, client.WithResumeAfter); only the event numbers
// themselves (StreamEvent.Seq) are wire data, and stay here.
package a2a

//go:generate bash ../proto/generate.sh
