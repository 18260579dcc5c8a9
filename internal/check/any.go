package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// run runs every check of one interface.
func (b *bindingRun) run(ctx context.Context) {
	card := b.s.card
	if !b.authChecks(ctx) {
		return
	}
	b.unknownTaskChecks(ctx)
	b.versionChecks(ctx)
	b.contentTypeChecks(ctx)
	switch b.t.binding {
	case a2a.BindingJSONRPC:
		b.envelopeChecks(ctx)
	case a2a.BindingGRPC:
		b.grpcChecks(ctx)
	default:
		b.restChecks(ctx)
	}
	b.extendedCardChecks(ctx)
	if b.s.rep.Conformance {
		b.agentChecks(ctx)
	} else {
		for _, c := range agentCatalogue(card) {
			b.check(c).skip("needs Parley's conformance agent (parley serve --agent conformance): %s", b.s.rep.Detected)
		}
	}
	b.listChecks(ctx) // after the agent checks, so that there are tasks to list
}

// unknownID returns an id no server has.
func unknownID(what string) string { return "parley-check-no-such-" + what + "-" + a2a.NewID()[:8] }

// requiresAuth reports whether the card declares security requirements.
func requiresAuth(card *a2a.AgentCard) bool {
	for _, r := range card.GetSecurityRequirements() {
		if len(r.GetSchemes()) > 0 {
			return true
		}
	}
	return false
}

// authChecks grades authentication when the card declares it. It returns
// false when the remaining checks cannot run (credentials needed and not
// given).
func (b *bindingRun) authChecks(ctx context.Context) bool {
	card := b.s.card
	r := b.check(Result{ID: "auth.anonymous", Operation: a2a.MethodGetTask, Title: "a request without credentials is refused when the card requires authentication",
		Level: "MUST", Section: "§3.3.2, §7.4",
		Requires: "Servers MUST reject requests with invalid or missing authentication credentials; MUST authenticate every incoming request"})
	if !requiresAuth(card) {
		r.na("the card declares no security requirements")
		b.check(Result{ID: "auth.challenge", Title: "the refusal carries an authentication challenge", Level: "SHOULD", Section: "§3.3.2, §7.4",
			Requires: "Servers SHOULD include authentication challenge information in the error response"}).na("the card declares no security requirements")
		return true
	}
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{token: strp("")})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeUnauthenticated):
			r.pass("refused: %s", describeError(res.err))
		case res.ok():
			r.fail("an anonymous request was served")
		default:
			r.fail("an anonymous request got %s instead of an authentication error (so the server looked for the task before checking the caller, §13.1)", describeError(res.err))
		}
	}
	c := b.check(Result{ID: "auth.challenge", Title: "the refusal carries an authentication challenge", Level: "SHOULD", Section: "§3.3.2, §7.4",
		Requires: "Servers SHOULD include authentication challenge information in the error response (WWW-Authenticate)"}).saw(res)
	challenge := res.ex.Header.Get("WWW-Authenticate")
	if challenge == "" && res.ex.Trailer != nil {
		challenge = res.ex.Trailer.Get("WWW-Authenticate") // gRPC: metadata may come as trailers
	}
	switch {
	case res.failed() || !res.err.is(a2a.CodeUnauthenticated):
		c.skip("the anonymous request was not refused as unauthenticated")
	case challenge != "":
		c.pass("WWW-Authenticate: %s", challenge)
	case b.t.binding == a2a.BindingGRPC:
		c.warn("no www-authenticate metadata")
	default:
		c.warn("no WWW-Authenticate header")
	}
	if b.t.token == "" {
		b.check(Result{ID: "auth.credentials", Title: "credentials for the operation checks", Level: "MUST", Section: "§7.3",
			Requires: "the client includes credentials for every A2A request"}).
			skip("the card requires authentication and no --token was given: the operation checks cannot run")
		return false
	}
	return true
}

// unknownTaskChecks grades the errors for a task that does not exist, on
// every operation that names one (any agent).
func (b *bindingRun) unknownTaskChecks(ctx context.Context) {
	card := b.s.card
	r := b.check(Result{ID: "errors.unknown-task.get", Operation: a2a.MethodGetTask, Title: "GetTask of an unknown task is TaskNotFoundError",
		Level: "MUST", Section: "§3.1.3, §5.4, §9.5, §10.6, §11.6",
		Requires: "TaskNotFoundError (-32001 / HTTP 404 / NOT_FOUND), with a google.rpc.ErrorInfo (reason TASK_NOT_FOUND, domain a2a-protocol.org) on HTTP+JSON and gRPC"})
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["GetTask of an unknown task"] = outcomeKey(res)
	b.unknownErr = res

	r = b.check(Result{ID: "errors.unknown-task.cancel", Operation: a2a.MethodCancelTask, Title: "CancelTask of an unknown task is TaskNotFoundError",
		Level: "MUST", Section: "§3.1.5, §5.4",
		Requires: "CancelTask: TaskNotFoundError when the task does not exist"})
	res = b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: unknownID("task")}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["CancelTask of an unknown task"] = outcomeKey(res)

	r = b.check(Result{ID: "errors.unknown-task.send", Operation: a2a.MethodSendMessage, Title: "a message naming an unknown taskId is TaskNotFoundError",
		Level: "MUST", Section: "§3.4.2",
		Requires: "A taskId the client sends MUST reference an existing task; the agent MUST return a TaskNotFoundError if it does not"})
	m := a2a.UserMessage("hello")
	m.TaskId = unknownID("task")
	res = b.t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: m}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["SendMessage with an unknown taskId"] = outcomeKey(res)

	r = b.check(Result{ID: "errors.unknown-task.subscribe", Operation: a2a.MethodSubscribeToTask, Title: "SubscribeToTask of an unknown task is refused",
		Level: "MUST", Section: "§3.1.6, §3.3.4",
		Requires: "TaskNotFoundError for an unknown task; UnsupportedOperationError when capabilities.streaming is false or absent"})
	res = b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: unknownID("task")}, callOpts{}, streamCtl{max: 5 * time.Second})
	want := a2a.CodeTaskNotFound
	if !card.GetCapabilities().GetStreaming() {
		want = a2a.CodeUnsupportedOperation
		if res.err.is(a2a.CodeTaskNotFound) {
			r.saw(res).na("TaskNotFoundError, while the card does not declare streaming: the spec lists both errors and no order")
			want = 0
		}
	}
	if want != 0 {
		if res.ok() && len(res.ex.Events) > 0 && res.ex.Events[0].Err != nil {
			// An error sent as the first (and only) event of a stream.
			res = &result{ex: res.ex, err: res.ex.Events[0].Err}
			r.expect(b.t.binding, res, want)
		} else {
			r.expect(b.t.binding, res, want)
		}
	}
	b.probes["SubscribeToTask of an unknown task"] = outcomeKey(res)

	push := card.GetCapabilities().GetPushNotifications()
	r = b.check(Result{ID: "errors.unknown-task.push-configs", Operation: a2a.MethodListTaskPushNotificationConfigs, Title: "push configurations of an unknown task are refused",
		Level: "MUST", Section: "§3.1.9, §3.3.4",
		Requires: "TaskNotFoundError for an unknown task; PushNotificationNotSupportedError for every push configuration operation when capabilities.pushNotifications is false or absent"})
	res = b.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: unknownID("task")}, callOpts{})
	switch {
	case push:
		r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	case res.err.is(a2a.CodeTaskNotFound):
		r.saw(res).na("TaskNotFoundError while the card does not declare pushNotifications: the spec lists both errors and no order")
	default:
		r.expect(b.t.binding, res, a2a.CodePushNotificationNotSupported)
	}
	b.probes["ListTaskPushNotificationConfigs of an unknown task"] = outcomeKey(res)

	r = b.check(Result{ID: "errors.unknown-config.get", Operation: a2a.MethodGetTaskPushNotificationConfig, Title: "GetTaskPushNotificationConfig of an unknown configuration is refused",
		Level: "MUST", Section: "§3.1.8, §3.3.4",
		Requires: "The operation MUST fail if the configuration does not exist (TaskNotFoundError); PushNotificationNotSupportedError when push is not declared"})
	res = b.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: unknownID("task"), Id: unknownID("config")}, callOpts{})
	switch {
	case push:
		r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	case res.err.is(a2a.CodeTaskNotFound):
		r.saw(res).na("TaskNotFoundError while the card does not declare pushNotifications: the spec lists both errors and no order")
	default:
		r.expect(b.t.binding, res, a2a.CodePushNotificationNotSupported)
	}

	if b.t.binding == a2a.BindingJSONRPC {
		r = b.check(Result{ID: "errors.jsonrpc-http-status", Operation: a2a.MethodGetTask, Title: "HTTP status of a JSON-RPC error response",
			Level: "SPEC SILENT", Section: "§9.5",
			Requires: "the spec does not say which HTTP status carries a JSON-RPC error (every SDK uses 200)"}).saw(b.unknownErr)
		if !b.unknownErr.failed() {
			r.na("HTTP %d", b.unknownErr.ex.Status)
		} else {
			r.skip("no response")
		}
	}
}

// versionChecks grades A2A-Version handling (B7) with GetTask of an
// unknown task, which a server that processes the request answers with
// TaskNotFoundError.
func (b *bindingRun) versionChecks(ctx context.Context) {
	get := func(o callOpts) *result {
		return b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, o)
	}
	processed := func(res *result) bool { return res.err.is(a2a.CodeTaskNotFound) }

	// Missing header: 0.3 semantics (§3.6.2). A JSON-RPC method name of
	// v1.0 (GetTask; v0.3 said tasks/get) processed as such proves 1.0
	// semantics; on HTTP+JSON and gRPC nothing observable tells them apart.
	r := b.check(Result{ID: "B7.version-missing", Row: "B7", Operation: a2a.MethodGetTask, Title: "a request without A2A-Version is treated as 0.3",
		Level: "MUST", Section: "§3.6.2, §9.2",
		Requires: "Agents MUST interpret an empty value as version 0.3, MUST process requests with the semantics of the requested version, and MUST return VersionNotSupportedError for a version the interface does not support"})
	res := get(callOpts{version: strp("")})
	r.saw(res)
	b.probes["GetTask without A2A-Version"] = outcomeKey(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeVersionNotSupported):
			r.same().pass("refused with %s", describeError(res.err))
		case b.t.binding == a2a.BindingJSONRPC && res.err.is(a2a.CodeMethodNotFound):
			r.differs("Parley refuses with VersionNotSupportedError").pass("answered as a 0.3 server would (no method GetTask in 0.3): %s", describeError(res.err))
		case b.t.binding == a2a.BindingJSONRPC && (processed(res) || res.ok()):
			r.differs("Parley refuses with VersionNotSupportedError").fail("processed with v1.0 semantics (the v1.0 method GetTask answered with %s), although an empty version means 0.3", res.outcome())
		default:
			r.differs("Parley refuses with VersionNotSupportedError").na("answered %s: nothing observable tells whether 0.3 semantics were applied", res.outcome())
		}
	}

	r = b.check(Result{ID: "B7.version-unsupported", Row: "B7", Operation: a2a.MethodGetTask, Title: "an unsupported version (A2A-Version: 9.9) is VersionNotSupportedError",
		Level: "MUST", Section: "§3.6.2, §5.4",
		Requires: "If the version is not supported by the interface, agents MUST return a VersionNotSupportedError (-32009 / 400 / FAILED_PRECONDITION)"})
	res = get(callOpts{version: strp("9.9")})
	if r.expect(b.t.binding, res, a2a.CodeVersionNotSupported) {
		r.same()
	}
	b.probes["GetTask with A2A-Version 9.9"] = outcomeKey(res)

	r = b.check(Result{ID: "B7.version-patch", Row: "B7", Operation: a2a.MethodGetTask, Title: "a patch number is ignored (A2A-Version: 1.0.1 is served as 1.0)",
		Level: "MUST", Section: "§3.6",
		Requires: "Patch version numbers SHOULD NOT be used in requests, and MUST not be considered when clients and servers negotiate protocol versions"})
	res = get(callOpts{version: strp("1.0.1")})
	r.saw(res)
	b.probes["GetTask with A2A-Version 1.0.1"] = outcomeKey(res)
	if !r.incomplete(res) {
		switch {
		case processed(res):
			r.same().pass("served as 1.0 (%s)", describeError(res.err))
		case res.err.is(a2a.CodeVersionNotSupported):
			r.differs("Parley compares Major.Minor only").fail("refused: the server considered the patch number (%s)", describeError(res.err))
		default:
			r.fail("got %s; want the request processed as 1.0 (TaskNotFoundError)", res.outcome())
		}
	}

	r = b.check(Result{ID: "B7.version-query", Row: "B7", Operation: a2a.MethodGetTask, Title: "the version as a request parameter (?A2A-Version=1.0, no header)",
		Level: "MAY", Section: "§3.6.1, §9.2, D31",
		Requires: "Clients MAY provide the A2A-Version as a request parameter instead of a header (which §9.2/§11.2 contradict: service parameters MUST be headers)"})
	if b.t.binding == a2a.BindingGRPC {
		r.na("gRPC has no request parameters: service parameters travel only as metadata (§10.2)")
		res = nil
	} else {
		res = get(callOpts{version: strp(""), query: "A2A-Version=1.0"})
		r.saw(res)
	}
	if res != nil && !r.incomplete(res) {
		if processed(res) {
			r.same().na("read: processed as 1.0")
		} else {
			r.differs("Parley reads the query parameter").na("not read: %s", res.outcome())
		}
	}

	r = b.check(Result{ID: "B7.version-error-details", Row: "B7", Operation: a2a.MethodGetTask, Title: "the version error says which versions are supported",
		Level: "SPEC SILENT", Section: "§9.2, §6.4",
		Requires: "the spec does not say how a server lists its supported versions"})
	res = get(callOpts{version: strp("9.9")})
	r.saw(res)
	switch {
	case res.failed() || !res.err.is(a2a.CodeVersionNotSupported):
		r.skip("no VersionNotSupportedError to look at")
	case res.err.Metadata["supportedVersions"] != "":
		r.same().na("ErrorInfo.metadata.supportedVersions = %q", res.err.Metadata["supportedVersions"])
	default:
		r.differs("Parley lists them in ErrorInfo.metadata.supportedVersions").na("not in ErrorInfo metadata (message: %q)", abridge(res.err.Message, 120))
	}
}

// contentTypeChecks grades response media types (B8).
func (b *bindingRun) contentTypeChecks(ctx context.Context) {
	lres := b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: ptr[int32](1)}, callOpts{})
	b.listRes = lres
	if b.t.binding == a2a.BindingGRPC {
		for _, x := range []struct {
			id, what, op string
			res          *result
		}{
			{"B8.success-type", "a success response", a2a.MethodListTasks, lres},
			{"B8.error-type", "an error response", a2a.MethodGetTask, b.unknownErr},
		} {
			r := b.check(Result{ID: x.id, Row: "B8", Operation: x.op, Title: "media type of " + x.what,
				Level: "MUST", Section: "§9.1, §11.1", Requires: "JSON-RPC: application/json; HTTP+JSON: application/a2a+json (the JSON media types do not apply to gRPC)"}).saw(x.res)
			r.na("gRPC carries protobuf messages (Content-Type %q): graded by grpc.protocol", x.res.ex.Header.Get("Content-Type"))
		}
		return
	}
	jsonrpc := b.t.binding == a2a.BindingJSONRPC
	for _, x := range []struct {
		id, what string
		res      *result
	}{
		{"B8.success-type", "a success response", lres},
		{"B8.error-type", "an error response", b.unknownErr},
	} {
		c := Result{ID: x.id, Row: "B8", Title: "media type of " + x.what}
		if jsonrpc {
			c.Level, c.Section, c.Requires = "MUST", "§9.1", "JSON-RPC: Content-Type application/json for requests and responses"
		} else {
			c.Level, c.Section, c.Requires = "SHOULD", "§11.1, §11.6", "HTTP+JSON: Content-Type application/a2a+json SHOULD be used for requests and responses"
		}
		if x.res == lres {
			c.Operation = a2a.MethodListTasks
		} else {
			c.Operation = a2a.MethodGetTask
		}
		r := b.check(c).saw(x.res)
		if r.incomplete(x.res) {
			continue
		}
		if x.res == lres && !lres.ok() {
			r.skip("ListTasks did not succeed (%s)", lres.outcome())
			continue
		}
		ct := x.res.ex.contentType()
		switch {
		case jsonrpc && ct == "application/json":
			r.same().pass("%s", ct)
		case jsonrpc:
			r.differs("Parley sends application/json").fail("%q", ct)
		case ct == "application/a2a+json":
			r.same().pass("%s", ct)
		case ct == "application/json" || ct == "application/problem+json":
			r.differs("Parley sends application/a2a+json").warn("%s", ct)
		default:
			r.differs("Parley sends application/a2a+json").fail("%q is not a JSON media type", ct)
		}
	}
	if !jsonrpc {
		r := b.check(Result{ID: "B8.request-json", Row: "B8", Operation: a2a.MethodCancelTask, Title: "an HTTP+JSON request sent as application/json",
			Level: "SPEC SILENT", Section: "§11.1, §9.4",
			Requires: "requests SHOULD use application/a2a+json; the spec does not say whether a server must accept application/json"})
		res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: unknownID("task")}, callOpts{contentType: "application/json"})
		r.saw(res)
		if !r.incomplete(res) {
			if res.err.is(a2a.CodeTaskNotFound) {
				r.same().na("accepted (the request was processed: %s)", describeError(res.err))
			} else {
				r.differs("Parley accepts application/json").na("%s", res.outcome())
			}
		}
	}
}

// envelopeChecks grades JSON-RPC envelope handling (JSON-RPC 2.0 and §9).
func (b *bindingRun) envelopeChecks(ctx context.Context) {
	type envCase struct {
		id, title, level, section, requires string
		body                                string
		want                                a2a.Code
	}
	for _, c := range []envCase{
		{"envelope.parse-error", "a body that is not JSON is a parse error", "MUST", "§9.5",
			"JSONParseError -32700 when the server receives invalid JSON (JSON-RPC 2.0)",
			`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":`, a2a.CodeParseError},
		{"envelope.invalid-request", "a request without a method is an invalid request", "MUST", "§9.5",
			"InvalidRequestError -32600 when the JSON sent is not a valid Request object (JSON-RPC 2.0)",
			`{"jsonrpc":"2.0","id":2,"params":{"id":"x"}}`, a2a.CodeInvalidRequest},
		{"envelope.method-not-found", "an unknown method (the v0.3 name tasks/get) is method not found", "MUST", "§9.5, §9.1",
			"MethodNotFoundError -32601; v1.0 method names are PascalCase (GetTask), the v0.3 names are gone",
			`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"x"}}`, a2a.CodeMethodNotFound},
	} {
		r := b.check(Result{ID: c.id, Title: c.title, Level: c.level, Section: c.section, Requires: c.requires})
		res := b.t.rawPost(ctx, []byte(c.body), callOpts{})
		if r.expect(b.t.binding, res, c.want) {
			r.Parley = "same"
		}
	}

	r := b.check(Result{ID: "envelope.invalid-params", Operation: a2a.MethodGetTask, Title: "GetTask without its REQUIRED id is invalid params",
		Level: "SHOULD", Section: "§5.7, §3.3.2, §9.5",
		Requires: "Implementations SHOULD validate REQUIRED fields and reject messages that lack them (InvalidParamsError -32602); servers MUST validate all input parameters"})
	res := b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{}}`), callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeInvalidParams):
			r.same().pass("%s", describeError(res.err))
		case res.err.is(a2a.CodeTaskNotFound):
			r.differs("Parley answers InvalidParamsError").warn("%s: the missing id was looked up instead of being refused", describeError(res.err))
		default:
			r.fail("%s; want InvalidParamsError", res.outcome())
		}
	}

	r = b.check(Result{ID: "envelope.id-echo", Operation: a2a.MethodGetTask, Title: "the response echoes a string request id",
		Level: "MUST", Section: "§9.3",
		Requires: "requests are JSON-RPC 2.0 objects; a response's id MUST be the request's id"})
	res = b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","id":"parley-check-id","method":"GetTask","params":{"id":"`+unknownID("task")+`"}}`), callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
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

	r = b.check(Result{ID: "envelope.batch", Title: "a JSON-RPC batch (an array of requests)",
		Level: "SPEC SILENT", Section: "§3.0, §9.3",
		Requires: "the JSON-RPC binding says nothing about batch requests"})
	id1, id2 := unknownID("task"), unknownID("task")
	res = b.t.rawPost(ctx, []byte(`[{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":"`+id1+`"}},{"jsonrpc":"2.0","id":6,"method":"GetTask","params":{"id":"`+id2+`"}}]`), callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		body := bytes.TrimSpace(res.ex.Body)
		switch {
		case len(body) > 0 && body[0] == '[':
			r.differs("Parley refuses batches with -32600").na("served as a batch (an array of responses)")
		case res.err != nil:
			if res.err.is(a2a.CodeInvalidRequest) {
				r.same().na("refused: %s", describeError(res.err))
			} else {
				r.differs("Parley refuses batches with -32600").na("refused: %s", describeError(res.err))
			}
		default:
			r.differs("Parley refuses batches with -32600").na("HTTP %d, %s", res.ex.Status, res.outcome())
		}
	}

	r = b.check(Result{ID: "envelope.notification", Title: "a JSON-RPC notification (a request without an id)",
		Level: "SPEC SILENT", Section: "§3.0, §9.3",
		Requires: "the JSON-RPC binding says nothing about notifications"})
	res = b.t.rawPost(ctx, []byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"`+unknownID("task")+`"}}`), callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case len(bytes.TrimSpace(res.ex.Body)) == 0:
			r.differs("Parley refuses notifications with -32600").na("HTTP %d with no body (treated as a notification)", res.ex.Status)
		case res.err.is(a2a.CodeInvalidRequest):
			r.same().na("refused: %s", describeError(res.err))
		default:
			r.differs("Parley refuses notifications with -32600").na("answered: %s", res.outcome())
		}
	}
}

// restChecks grades HTTP+JSON specifics that work against any agent.
func (b *bindingRun) restChecks(ctx context.Context) {
	r := b.check(Result{ID: "B1.subscribe-verbs", Row: "B1", Operation: a2a.MethodSubscribeToTask, Title: "the subscribe route answers POST and GET",
		Level: "MUST", Section: "§11.3.2, §5.3, D1",
		Requires: "SubscribeToTask is POST /tasks/{id}:subscribe in the prose and GET in the proto (an unresolved conflict): a server MUST serve the operation; accepting both verbs is the tolerant reading"})
	id := unknownID("task")
	served := func(res *result) bool {
		if res.failed() {
			return false
		}
		if len(res.ex.Events) > 0 && res.ex.Events[0].Err != nil {
			res.err = res.ex.Events[0].Err
		}
		return res.err.is(a2a.CodeTaskNotFound) || res.err.is(a2a.CodeUnsupportedOperation)
	}
	post := b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{}, streamCtl{max: 5 * time.Second})
	get := b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{verb: http.MethodGet}, streamCtl{max: 5 * time.Second})
	r.Sent = describeRequest(post.ex) + " | " + describeRequest(get.ex)
	r.Received = describeResponse(post) + " | " + describeResponse(get)
	if post.failed() || get.failed() {
		r.skip("could not complete the requests")
		return
	}
	p, g := served(post), served(get)
	switch {
	case p && g:
		r.same().pass("both verbs reach the operation (%s)", describeError(post.err))
	case p:
		r.differs("Parley serves both verbs").pass("POST served; GET answered %s (the proto's verb; D1)", get.outcome())
	case g:
		r.differs("Parley serves both verbs").pass("GET served; POST answered %s (the prose's verb; D1)", post.outcome())
	default:
		r.fail("neither verb reaches the operation: POST %s, GET %s", post.outcome(), get.outcome())
	}
}

// grpcChecks grades gRPC specifics that work against any agent.
func (b *bindingRun) grpcChecks(ctx context.Context) {
	r := b.check(Result{ID: "grpc.protocol", Operation: a2a.MethodListTasks, Title: "a gRPC answer: HTTP/2, application/grpc, the status in grpc-status",
		Level: "MUST", Section: "§10.1",
		Requires: "gRPC over HTTP/2, Protocol Buffers version 3 serialization, the A2AService of a2a.proto (the gRPC protocol: Content-Type application/grpc[+proto], length-prefixed messages, the call's status in grpc-status)"}).saw(b.listRes)
	if res := b.listRes; !r.incomplete(res) {
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
		case !res.ok():
			r.fail("ListTasks failed: %s", res.outcome())
		default:
			tls := "cleartext HTTP/2 (h2c)"
			if strings.HasPrefix(b.t.url, "https://") {
				tls = "HTTP/2 over TLS"
			}
			r.pass("%s, %s, grpc-status %d in the %s", tls, ex.Header.Get("Content-Type"), ex.GRPC.Code, ex.GRPC.Where)
		}
	}

	r = b.check(Result{ID: "grpc.unknown-method", Title: "an unknown method of A2AService is UNIMPLEMENTED",
		Level: "MUST", Section: "§5.4, §10.3",
		Requires: "MethodNotFoundError maps to the gRPC status UNIMPLEMENTED; a gRPC server answers a method it does not serve with UNIMPLEMENTED"})
	res := b.t.call(ctx, "NoSuchMethod", &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{})
	if r.expect(b.t.binding, res, a2a.CodeMethodNotFound) {
		r.Parley = "same"
	}

	r = b.check(Result{ID: "grpc.invalid-params", Operation: a2a.MethodGetTask, Title: "GetTask without its REQUIRED id is invalid params",
		Level: "SHOULD", Section: "§5.7, §3.3.2, §10.6",
		Requires: "Implementations SHOULD validate REQUIRED fields and reject messages that lack them (InvalidParamsError, INVALID_ARGUMENT); servers MUST validate all input parameters"})
	res = b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{}, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeInvalidParams) && res.err.Status == "INVALID_ARGUMENT":
			r.same().pass("%s", describeError(res.err))
		case res.err.is(a2a.CodeTaskNotFound):
			r.differs("Parley answers InvalidParamsError").warn("%s: the missing id was looked up instead of being refused", describeError(res.err))
		default:
			r.fail("%s; want InvalidParamsError (INVALID_ARGUMENT)", res.outcome())
		}
	}
}

// extendedCardChecks grades GetExtendedAgentCard (B13).
func (b *bindingRun) extendedCardChecks(ctx context.Context) {
	declared := b.s.card.GetCapabilities().GetExtendedAgentCard()
	if !declared {
		r := b.check(Result{ID: "B13.not-declared", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "GetExtendedAgentCard when the card does not declare it",
			Level: "MUST", Section: "§3.1.11, §13.3",
			Requires: "When capabilities.extendedAgentCard is false or not present, the operation MUST return UnsupportedOperationError"})
		res := b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{})
		if r.expect(b.t.binding, res, a2a.CodeUnsupportedOperation) {
			r.same()
		}
		b.probes["GetExtendedAgentCard"] = outcomeKey(res)
		for _, id := range []string{"B13.anonymous", "B13.authenticated"} {
			b.check(Result{ID: id, Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "extended card access", Level: "MUST", Section: "§13.3",
				Requires: "The Get Extended Agent Card operation MUST require authentication"}).na("the card does not declare an extended agent card")
		}
		return
	}
	b.check(Result{ID: "B13.not-declared", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "GetExtendedAgentCard when the card does not declare it",
		Level: "MUST", Section: "§13.3", Requires: "UnsupportedOperationError when not declared"}).na("the card declares an extended agent card")

	r := b.check(Result{ID: "B13.anonymous", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "an anonymous caller does not get the extended card",
		Level: "MUST", Section: "§13.3, §3.1.11",
		Requires: "The Get Extended Agent Card operation MUST require authentication, with one of the schemes the public card declares"})
	res := b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{token: strp("")})
	r.saw(res)
	b.probes["GetExtendedAgentCard without credentials"] = outcomeKey(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeUnauthenticated):
			r.same().pass("refused: %s", describeError(res.err))
		case res.ok():
			got := &a2a.AgentCard{}
			_ = res.decode(got)
			note := ""
			if got.GetName() == b.s.card.GetName() {
				note = fmt.Sprintf(" (a card named %q like the public card: nothing extra leaked, but the operation did not require authentication)", got.GetName())
			}
			r.differs("Parley answers 401 with WWW-Authenticate").fail("an anonymous caller got a card%s", note)
		case res.err.is(a2a.CodeExtendedAgentCardNotConfigured):
			r.na("ExtendedAgentCardNotConfiguredError: nothing to protect, so whether authentication is required cannot be seen")
		default:
			r.warn("refused with %s rather than an authentication error", describeError(res.err))
		}
	}

	r = b.check(Result{ID: "B13.authenticated", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "an authenticated caller gets the extended card",
		Level: "MUST", Section: "§3.1.11, §13.3",
		Requires: "declared and configured: the extended AgentCard; declared but not configured: ExtendedAgentCardNotConfiguredError"})
	if b.t.token == "" {
		r.skip("no --token given")
		return
	}
	res = b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{})
	r.saw(res)
	if r.incomplete(res) {
		return
	}
	switch {
	case res.ok():
		got := &a2a.AgentCard{}
		if err := res.decode(got); err != nil {
			r.fail("the result is not an AgentCard: %v", err)
		} else if v := a2a.CheckRequired(got); len(v) > 0 {
			r.fail("the extended card lacks REQUIRED members: %s: %s", v[0].Field, v[0].Description)
		} else {
			r.pass("card %q", got.GetName())
		}
	case res.err.is(a2a.CodeExtendedAgentCardNotConfigured):
		r.pass("%s", describeError(res.err))
	default:
		r.warn("the --token caller was refused: %s", describeError(res.err))
	}
}

// listChecks grades the shape of ListTasks (B5) on whatever tasks the
// server has.
func (b *bindingRun) listChecks(ctx context.Context) {
	r := b.check(Result{ID: "B5.list-shape", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks returns tasks, nextPageToken, pageSize and totalSize",
		Level: "MUST", Section: "§3.1.4, §5.7",
		Requires: "The nextPageToken field MUST always be present in the response (\"\" on the last page); tasks, pageSize and totalSize are REQUIRED"})
	res := b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{}, callOpts{})
	r.saw(res)
	var raw struct {
		Tasks         []json.RawMessage `json:"tasks"`
		NextPageToken *string           `json:"nextPageToken"`
		PageSize      *json.Number      `json:"pageSize"`
		TotalSize     *json.Number      `json:"totalSize"`
	}
	grpc := b.t.binding == a2a.BindingGRPC
	if grpc && !r.incomplete(res) {
		l := &a2a.ListTasksResponse{}
		switch {
		case !res.ok():
			r.fail("ListTasks failed: %s", res.outcome())
		case res.decode(l) != nil:
			r.fail("the response message is not a ListTasksResponse")
		default:
			r.same().pass("%d tasks, nextPageToken %q, pageSize %d, totalSize %d (protobuf: a field at its default is not sent and reads as the default, so presence is not observable)",
				len(l.GetTasks()), abridge(l.GetNextPageToken(), 24), l.GetPageSize(), l.GetTotalSize())
		}
	} else if !r.incomplete(res) {
		var top map[string]json.RawMessage
		switch {
		case !res.ok():
			r.fail("ListTasks failed: %s", res.outcome())
		case json.Unmarshal(res.raw, &top) != nil || json.Unmarshal(res.raw, &raw) != nil:
			r.fail("the result is not a ListTasksResponse object")
		default:
			var missing []string
			for _, k := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
				if _, ok := top[k]; !ok {
					missing = append(missing, k)
				}
			}
			if len(missing) > 0 {
				r.fail("missing: %s", strings.Join(missing, ", "))
			} else {
				r.same().pass("%d tasks, nextPageToken %q, pageSize %s, totalSize %s", len(raw.Tasks), abridge(*raw.NextPageToken, 24), raw.PageSize, raw.TotalSize)
			}
		}
	}

	list := &a2a.ListTasksResponse{}
	haveList := res.ok() && res.decode(list) == nil
	r = b.check(Result{ID: "B5.artifacts-omitted", Row: "B5", Operation: a2a.MethodListTasks, Title: "without includeArtifacts, tasks carry no artifacts member",
		Level: "MUST", Section: "§3.1.4",
		Requires: "When includeArtifacts is false (the default), the artifacts field MUST be omitted entirely from each Task object (not an empty array or null)"}).saw(res)
	switch {
	case !haveList:
		r.skip("no ListTasks result")
	case grpc && len(list.GetTasks()) == 0:
		r.na("the server lists no tasks")
	case grpc:
		bad := 0
		for _, t := range list.GetTasks() {
			if len(t.GetArtifacts()) > 0 {
				bad++
			}
		}
		if bad > 0 {
			r.fail("%d of %d tasks carry artifacts", bad, len(list.GetTasks()))
		} else {
			r.same().pass("none of %d tasks carries artifacts", len(list.GetTasks()))
		}
	case len(raw.Tasks) == 0:
		r.na("the server lists no tasks")
	default:
		bad := 0
		for _, t := range raw.Tasks {
			var o map[string]json.RawMessage
			if json.Unmarshal(t, &o) == nil {
				if _, ok := o["artifacts"]; ok {
					bad++
				}
			}
		}
		if bad > 0 {
			r.fail("%d of %d tasks carry an artifacts member", bad, len(raw.Tasks))
		} else {
			r.same().pass("none of %d tasks carries artifacts", len(raw.Tasks))
		}
	}

	r = b.check(Result{ID: "B5.sorted", Row: "B5", Operation: a2a.MethodListTasks, Title: "tasks are sorted by status timestamp, newest first",
		Level: "MUST", Section: "§3.1.4",
		Requires: "Implementations MUST return tasks sorted by their status timestamp time in descending order"}).saw(res)
	if !haveList {
		r.skip("no ListTasks result")
	} else {
		sortedCheck(r, list.GetTasks())
	}

	for _, x := range []struct {
		id   string
		size int32
	}{{"B5.page-size-zero", 0}, {"B5.page-size-over", 101}} {
		r = b.check(Result{ID: x.id, Row: "B5", Operation: a2a.MethodListTasks, Title: fmt.Sprintf("ListTasks with pageSize %d (outside 1..100)", x.size),
			Level: "SHOULD", Section: "§3.1.4, §2.7",
			Requires: "pageSize: the minimum value is 1, the maximum value is 100 (proto comment); the spec's validation sample refuses 150"})
		res := b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: ptr(x.size)}, callOpts{})
		r.saw(res)
		b.probes[fmt.Sprintf("ListTasks with pageSize %d", x.size)] = outcomeKey(res)
		if r.incomplete(res) {
			continue
		}
		got := &a2a.ListTasksResponse{}
		switch {
		case res.err.is(a2a.CodeInvalidParams):
			r.same().pass("refused: %s", describeError(res.err))
		case res.ok() && res.decode(got) == nil && got.GetPageSize() >= 1 && got.GetPageSize() <= 100 && len(got.GetTasks()) <= 100:
			r.differs("Parley refuses with InvalidParamsError").pass("accepted and kept within bounds (pageSize %d in the response)", got.GetPageSize())
		case res.ok():
			r.differs("Parley refuses with InvalidParamsError").warn("accepted: response pageSize %d, %d tasks", got.GetPageSize(), len(got.GetTasks()))
		default:
			r.differs("Parley refuses with InvalidParamsError").warn("refused with %s rather than InvalidParamsError", describeError(res.err))
		}
	}

	r = b.check(Result{ID: "B5.bad-token", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks with a page token the server never issued",
		Level: "SPEC SILENT", Section: "§3.1.4, §3.3.2",
		Requires: "page tokens are opaque; the spec does not say what an invalid one gets (servers MUST validate input, §3.3.2)"})
	res = b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageToken: "parley-check-not-a-token"}, callOpts{})
	r.saw(res)
	b.probes["ListTasks with a page token never issued"] = outcomeKey(res)
	if !r.incomplete(res) {
		if res.err.is(a2a.CodeInvalidParams) {
			r.same().na("refused: %s", describeError(res.err))
		} else {
			r.differs("Parley refuses with InvalidParamsError").na("%s", res.outcome())
		}
	}
}

// sortedCheck grades the order of listed tasks.
func sortedCheck(r *rec, tasks []*a2a.Task) {
	var stamped int
	for i, t := range tasks {
		if t.GetStatus().GetTimestamp() == nil {
			continue
		}
		stamped++
		if i > 0 && tasks[i-1].GetStatus().GetTimestamp() != nil &&
			tasks[i-1].GetStatus().GetTimestamp().AsTime().Before(t.GetStatus().GetTimestamp().AsTime()) {
			r.fail("task %d (%s) is newer than task %d (%s)", i, t.GetStatus().GetTimestamp().AsTime().Format(time.RFC3339Nano),
				i-1, tasks[i-1].GetStatus().GetTimestamp().AsTime().Format(time.RFC3339Nano))
			return
		}
	}
	if stamped < 2 {
		r.na("fewer than two tasks with a status timestamp")
		return
	}
	r.same().pass("%d tasks in descending status timestamp order", stamped)
}

func ptr[T any](v T) *T { return &v }
