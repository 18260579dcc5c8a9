package check

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// authFamily is what the authentication checks share: the answer to the
// anonymous request.
type authFamily struct {
	b   *bindingRun
	res *result
}

// authSteps grade authentication when the card declares it.
var authSteps = []step[*authFamily]{
	{Result{ID: "auth.anonymous", Operation: a2a.MethodGetTask, Title: "a request without credentials is refused when the card requires authentication",
		Level: "MUST", Section: "§3.3.2, §7.4",
		Requires: "Servers MUST reject requests with invalid or missing authentication credentials; MUST authenticate every incoming request " +
			"(401 / UNAUTHENTICATED, the spec's example; an authorization error, 403 / PERMISSION_DENIED, also rejects it and passes with a note)"},
		(*authFamily).anonymous},
	{Result{ID: "auth.challenge", Title: "the refusal carries an authentication challenge", Level: "SHOULD", Section: "§3.3.2, §7.4",
		Requires: "Servers SHOULD include authentication challenge information in the error response (WWW-Authenticate)"},
		(*authFamily).challenge},
	{Result{ID: "auth.permission", Operation: a2a.MethodSendMessage, Title: "a credential without the right to send is refused with an authorization error",
		Level: "MUST", Section: "§3.3.2",
		Requires: "Servers MUST return an authorization error when the authenticated client lacks required permissions (HTTP 403 Forbidden, gRPC PERMISSION_DENIED)"},
		(*authFamily).permission},
}

// authChecks grades authentication when the card declares it. It returns
// false when the remaining checks cannot run (credentials needed and not
// given).
func (b *bindingRun) authChecks(ctx context.Context) bool {
	if !requiresAuth(b.s.card) {
		for _, s := range authSteps {
			b.check(s.desc).na("the card declares no security requirements")
		}
		return true
	}
	runSteps(ctx, b, &authFamily{b: b}, authSteps)
	if b.t.token == "" {
		b.check(Result{ID: "auth.credentials", Title: "credentials for the operation checks", Level: "MUST", Section: "§7.3",
			Requires: "the client includes credentials for every A2A request"}).
			skip("the card requires authentication and no --token was given: the operation checks cannot run")
		return false
	}
	return true
}

// requiresAuth reports whether the card declares security requirements.
func requiresAuth(card *a2a.AgentCard) bool {
	for _, r := range card.GetSecurityRequirements() {
		if len(r.GetSchemes()) > 0 {
			return true
		}
	}
	return false
}

// anonymousRefused says whether an error refuses a call made without
// credentials, and how (the finding). §3.3.2 asks that such a request be
// rejected ("Servers MUST reject requests with invalid or missing
// authentication credentials") and gives HTTP 401 / gRPC UNAUTHENTICATED
// as examples of that authentication error; it names 403 /
// PERMISSION_DENIED for an authenticated caller that lacks a permission.
// A check's decision: an authorization error (PermissionDeniedError: HTTP
// 403, gRPC PERMISSION_DENIED) still rejects the request, which is what
// the MUST asks, so it passes too, with a note; Parley itself answers
// 401 with WWW-Authenticate (and auth.challenge grades only that form).
func anonymousRefused(e *wireError) (string, bool) {
	switch {
	case e.is(a2a.CodeUnauthenticated):
		return "refused: " + describeError(e), true
	case e.is(a2a.CodePermissionDenied):
		return "refused: " + describeError(e) + " (an authorization error for a caller without credentials: " +
			"§3.3.2's example for missing credentials is 401 / UNAUTHENTICATED, but the request is rejected as it MUST be)", true
	}
	return "", false
}

func (f *authFamily) anonymous(ctx context.Context, r *rec) {
	b := f.b
	f.res = b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{token: new("")})
	res := f.res
	if res.failed() && certificateRequired(res.ex.Err) {
		r.saw(res)
		r.pass("refused at the TLS handshake: the server requires a client certificate (%v)", res.ex.Err)
		return
	}
	if res.failed() && b.t.withheldCert() && httpx.ClosedBeforeAnswer(res.ex.Err) {
		// TLS 1.3: the server judges the client's certificate after the
		// client's side of the handshake is done, and its refusal may
		// reach the client only as a connection closed before any answer.
		r.saw(res)
		r.pass("refused: without the client certificate the run otherwise presents, the connection closed before any answer (%v): the TLS 1.3 form of a handshake refusal", res.ex.Err)
		return
	}
	if !r.gradable(res) {
		return
	}
	if finding, ok := anonymousRefused(res.err); ok {
		r.pass("%s", finding)
		return
	}
	switch {
	case res.ok():
		r.fail("an anonymous request was served")
	default:
		r.fail("an anonymous request got %s instead of an authentication error (so the server looked for the task before checking the caller, §13.1)", describeError(res.err))
	}
}

func (f *authFamily) challenge(_ context.Context, r *rec) {
	res := f.res
	r.saw(res)
	challenge := res.ex.Header.Get("WWW-Authenticate")
	if challenge == "" && res.ex.Trailer != nil {
		challenge = res.ex.Trailer.Get("WWW-Authenticate") // gRPC: metadata may come as trailers
	}
	switch {
	case res.failed() || !res.err.is(a2a.CodeUnauthenticated):
		r.skip("the anonymous request was not refused as unauthenticated")
	case challenge != "":
		r.pass("WWW-Authenticate: %s", challenge)
	case f.b.t.binding == a2a.BindingGRPC:
		r.warn("no www-authenticate metadata")
	default:
		r.warn("no WWW-Authenticate header")
	}
}

// permission sends a message with the credential that lacks the right to
// (Options.InsufficientToken): an authorization error passes, told apart
// from an authentication one (the credential is valid). The spec names
// no error for it, only its statuses (§3.3.2): HTTP 403 or gRPC
// PERMISSION_DENIED with any error passes, and on JSON-RPC, whose code
// for it the spec does not assign, an error Parley's table reads as
// PermissionDeniedError (-31403, the official Go SDK's).
func (f *authFamily) permission(ctx context.Context, r *rec) {
	b := f.b
	tok := b.s.opts.InsufficientToken
	if tok == "" {
		r.skip("no --insufficient-token (a credential the agent accepts without the right to send) given")
		return
	}
	res := b.t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: b.msg("hello")}, callOpts{token: &tok})
	if !r.gradable(res) {
		return
	}
	switch {
	case res.err.is(a2a.CodePermissionDenied):
		r.pass("refused: %s", describeError(res.err))
	case res.err != nil && res.ex.Status == http.StatusForbidden:
		r.pass("refused with HTTP 403: %s", describeError(res.err))
	case res.err != nil && res.err.GRPCCode == grpcPermissionDenied:
		r.pass("refused with PERMISSION_DENIED: %s", describeError(res.err))
	case res.ok():
		r.fail("the message was served: the credential's rights were not enforced")
	case res.err.is(a2a.CodeUnauthenticated):
		r.fail("refused as unauthenticated (%s): a valid credential without the right wants an authorization error (403, PERMISSION_DENIED)", describeError(res.err))
	default:
		r.fail("got %s instead of an authorization error", describeError(res.err))
	}
}

// grpcPermissionDenied is the google.rpc.Code PERMISSION_DENIED.
const grpcPermissionDenied = 7

// certificateRequired reports whether a call failed because the server
// wants a TLS client certificate the call did not present: the handshake
// alert certificate_required (TLS 1.3) or bad_certificate (TLS 1.2), as
// net/http reports it.
func certificateRequired(err error) bool {
	if err == nil {
		return false
	}
	var alert tls.AlertError
	if errors.As(err, &alert) && (alert == 116 || alert == 42) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "tls: certificate required") || strings.Contains(msg, "tls: bad certificate")
}
