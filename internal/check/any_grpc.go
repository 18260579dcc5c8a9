package check

import (
	"context"
	"strings"

	"parley.dev/parley/a2a"
)

// grpcSteps grade gRPC specifics that work against any agent.
var grpcSteps = []step[*bindingRun]{
	{Result{ID: "grpc.protocol", Operation: a2a.MethodListTasks, Title: "a gRPC answer: HTTP/2, application/grpc, the status in grpc-status",
		Level: "MUST", Section: "§10.1",
		Requires: "gRPC over HTTP/2, Protocol Buffers version 3 serialization, the A2AService of a2a.proto (the gRPC protocol: Content-Type application/grpc[+proto], length-prefixed messages, the call's status in grpc-status)"},
		(*bindingRun).grpcProtocol},
	{Result{ID: "grpc.unknown-method", Title: "an unknown method of A2AService is UNIMPLEMENTED",
		Level: "MUST", Section: "§5.4, §10.3",
		Requires: "MethodNotFoundError maps to the gRPC status UNIMPLEMENTED; a gRPC server answers a method it does not serve with UNIMPLEMENTED"},
		(*bindingRun).grpcUnknownMethod},
	{Result{ID: "grpc.invalid-params", Operation: a2a.MethodGetTask, Title: "GetTask without its REQUIRED id is invalid params",
		Level: "SHOULD", Section: "§5.7, §3.3.2, §10.6",
		Requires: "Implementations SHOULD validate REQUIRED fields and reject messages that lack them (InvalidParamsError, INVALID_ARGUMENT); servers MUST validate all input parameters"},
		(*bindingRun).grpcInvalidParams},
}

// grpcProtocol grades the framing of the ListTasks answer of the media
// type checks. An error answer correctly framed (UNAUTHENTICATED, say, when
// no credentials were given) passes: the framing is what is graded here,
// the error by the checks of its own.
func (b *bindingRun) grpcProtocol(_ context.Context, r *rec) {
	res := b.listRes
	if !r.gradable(res) {
		return
	}
	ex := res.ex
	switch {
	case ex.Proto != 2:
		r.fail("HTTP/%d", ex.Proto)
	case !isGRPCContentType(ex.Header):
		r.fail("Content-Type %q", ex.Header.Get("Content-Type"))
	case ex.GRPC == nil:
		r.fail("no grpc-status")
	case res.broken != "":
		r.fail("%s", res.broken)
	default:
		tls := "cleartext HTTP/2 (h2c)"
		if strings.HasPrefix(b.t.url, "https://") {
			tls = "HTTP/2 over TLS"
		}
		answer := ""
		if res.err != nil {
			answer = " (an error: " + describeError(res.err) + ")"
		}
		r.pass("%s, %s, grpc-status %d in the %s%s", tls, ex.Header.Get("Content-Type"), ex.GRPC.Code, ex.GRPC.Where, answer)
	}
}

func (b *bindingRun) grpcUnknownMethod(ctx context.Context, r *rec) {
	res := b.t.call(ctx, "NoSuchMethod", &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{})
	r.expectSame(b.t.binding, res, a2a.CodeMethodNotFound)
}

func (b *bindingRun) grpcInvalidParams(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{}, callOpts{})
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeInvalidParams) && res.err.Status == "INVALID_ARGUMENT":
		r.same().pass("%s", describeError(res.err))
	case res.err.is(a2a.CodeTaskNotFound):
		r.differs("Parley answers InvalidParamsError").warn("%s: the missing id was looked up instead of being refused", describeError(res.err))
	default:
		r.fail("%s; want InvalidParamsError (INVALID_ARGUMENT)", res.outcome())
	}
}
