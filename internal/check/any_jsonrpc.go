package check

import (
	"bytes"
	"context"
	"encoding/json"

	"parley.dev/parley/a2a"
)

// envelopeSteps grade JSON-RPC envelope handling (JSON-RPC 2.0 and §9),
// with bodies sent as they are.
var envelopeSteps = []step[*bindingRun]{
	{Result{ID: "envelope.parse-error", Title: "a body that is not JSON is a parse error", Level: "MUST", Section: "§9.5",
		Requires: "JSONParseError -32700 when the server receives invalid JSON (JSON-RPC 2.0)"},
		refusedEnvelope(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":`, a2a.CodeParseError)},
	{Result{ID: "envelope.invalid-request", Title: "a request without a method is an invalid request", Level: "MUST", Section: "§9.5",
		Requires: "InvalidRequestError -32600 when the JSON sent is not a valid Request object (JSON-RPC 2.0)"},
		refusedEnvelope(`{"jsonrpc":"2.0","id":2,"params":{"id":"x"}}`, a2a.CodeInvalidRequest)},
	{Result{ID: "envelope.method-not-found", Title: "an unknown method is method not found", Level: "MUST", Section: "§9.5, §9.1",
		Requires: "MethodNotFoundError -32601; v1.0 method names are PascalCase (GetTask); an agent that serves v0.3 beside v1.0 also knows the v0.3 names (tasks/get), so the probe uses a name neither version has"},
		refusedEnvelope(`{"jsonrpc":"2.0","id":3,"method":"tasks/noSuchMethod","params":{"id":"x"}}`, a2a.CodeMethodNotFound)},
	{Result{ID: "envelope.invalid-params", Operation: a2a.MethodGetTask, Title: "GetTask without its REQUIRED id is invalid params",
		Level: "SHOULD", Section: "§5.7, §3.3.2, §9.5",
		Requires: "Implementations SHOULD validate REQUIRED fields and reject messages that lack them (InvalidParamsError -32602); servers MUST validate all input parameters"},
		(*bindingRun).envelopeInvalidParams},
	{Result{ID: "envelope.id-echo", Operation: a2a.MethodGetTask, Title: "the response echoes a string request id",
		Level: "MUST", Section: "§9.3",
		Requires: "requests are JSON-RPC 2.0 objects; a response's id MUST be the request's id"},
		(*bindingRun).envelopeIDEcho},
	{Result{ID: "envelope.batch", Title: "a JSON-RPC batch (an array of requests)",
		Level: "SPEC SILENT", Section: "§3.0, §9.3",
		Requires: "the JSON-RPC binding says nothing about batch requests"},
		(*bindingRun).envelopeBatch},
	{Result{ID: "envelope.notification", Title: "a JSON-RPC notification (a request without an id)",
		Level: "SPEC SILENT", Section: "§3.0, §9.3",
		Requires: "the JSON-RPC binding says nothing about notifications"},
		(*bindingRun).envelopeNotification},
}

// refusedEnvelope is a step that sends body and wants the error want.
func refusedEnvelope(body string, want a2a.Code) func(*bindingRun, context.Context, *rec) {
	return func(b *bindingRun, ctx context.Context, r *rec) {
		res := b.t.rawPost(ctx, []byte(body), callOpts{})
		r.expectSame(b.t.binding, res, want)
	}
}

func (b *bindingRun) envelopeInvalidParams(ctx context.Context, r *rec) {
	res := b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{}}`), callOpts{})
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeInvalidParams):
		r.same().pass("%s", describeError(res.err))
	case res.err.is(a2a.CodeTaskNotFound):
		r.differs("Parley answers InvalidParamsError").warn("%s: the missing id was looked up instead of being refused", describeError(res.err))
	default:
		r.fail("%s; want InvalidParamsError", res.outcome())
	}
}

func (b *bindingRun) envelopeIDEcho(ctx context.Context, r *rec) {
	res := b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","id":"parley-check-id","method":"GetTask","params":{"id":"`+unknownID("task")+`"}}`), callOpts{})
	if !r.gradable(res) {
		return
	}
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(res.ex.Body, &env)
	if string(bytes.TrimSpace(env.ID)) == `"parley-check-id"` {
		r.pass("id echoed")
	} else {
		r.fail("id %s", string(env.ID))
	}
}

func (b *bindingRun) envelopeBatch(ctx context.Context, r *rec) {
	id1, id2 := unknownID("task"), unknownID("task")
	res := b.t.rawPost(ctx, []byte(`[{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":"`+id1+`"}},{"jsonrpc":"2.0","id":6,"method":"GetTask","params":{"id":"`+id2+`"}}]`), callOpts{})
	if !r.gradable(res) {
		return
	}
	body := bytes.TrimSpace(res.ex.Body)
	switch {
	case len(body) > 0 && body[0] == '[':
		r.differs("Parley refuses batches with -32600").na("served as a batch (an array of responses)")
	case res.err.is(a2a.CodeInvalidRequest):
		r.same().na("refused: %s", describeError(res.err))
	case res.err != nil:
		r.differs("Parley refuses batches with -32600").na("refused: %s", describeError(res.err))
	default:
		r.differs("Parley refuses batches with -32600").na("HTTP %d, %s", res.ex.Status, res.outcome())
	}
}

func (b *bindingRun) envelopeNotification(ctx context.Context, r *rec) {
	res := b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"`+unknownID("task")+`"}}`), callOpts{})
	switch {
	case !r.gradable(res):
	case len(bytes.TrimSpace(res.ex.Body)) == 0:
		r.differs("Parley refuses notifications with -32600").na("HTTP %d with no body (treated as a notification)", res.ex.Status)
	case res.err.is(a2a.CodeInvalidRequest):
		r.same().na("refused: %s", describeError(res.err))
	default:
		r.differs("Parley refuses notifications with -32600").na("answered: %s", res.outcome())
	}
}
