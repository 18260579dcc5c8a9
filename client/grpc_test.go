package client_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
)

// fakeGRPC is a hand-written gRPC server: SendStreamingMessage sends the
// events, then ends with end (nil: OK); GetTask fails with fail.
type fakeGRPC struct {
	a2aconnect.UnimplementedA2AServiceHandler
	events []*a2a.StreamResponse
	end    error
	fail   error
}

func (f *fakeGRPC) SendStreamingMessage(_ context.Context, _ *connect.Request[a2a.SendMessageRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	for _, ev := range f.events {
		if err := out.Send(ev); err != nil {
			return err
		}
	}
	return f.end
}

func (f *fakeGRPC) SubscribeToTask(ctx context.Context, _ *connect.Request[a2a.SubscribeToTaskRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	return f.SendStreamingMessage(ctx, nil, out)
}

func (f *fakeGRPC) GetTask(context.Context, *connect.Request[a2a.GetTaskRequest]) (*connect.Response[a2a.Task], error) {
	return nil, f.fail
}

// fakeGRPCClient serves h over cleartext HTTP/2 and returns a client of
// its gRPC interface only.
func fakeGRPCClient(t *testing.T, h http.Handler) *client.Client {
	t.Helper()
	hs := testkit.ServeH2C(t, h, nil)
	card, _ := agents.Card("echo", []*a2a.AgentInterface{{Url: hs.Listener.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"}})
	c, err := client.New(card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func fakeService(f *fakeGRPC) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(a2aconnect.NewA2AServiceHandler(f))
	return mux
}

func streamEvent(t *testing.T, js string) *a2a.StreamResponse {
	t.Helper()
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal([]byte(js), sr); err != nil {
		t.Fatal(err)
	}
	return sr
}

// TestGRPCStreamEnds checks how gRPC streams that end early or break are
// reported: a status other than OK before a terminal state is the end of
// the stream (ErrStreamEnded), an A2A status is the error itself.
func TestGRPCStreamEnds(t *testing.T) {
	t.Parallel()
	notFound := connect.NewError(connect.CodeNotFound, errors.New("gone"))
	if d, err := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: "TASK_NOT_FOUND", Domain: a2a.DomainA2A}); err == nil {
		notFound.AddDetail(d)
	}
	cases := []grpcStreamEndCase{
		{name: "send closed while working", events: []string{workingTask}, want: "ended TASK_STATE_WORKING", n: 1},
		{name: "send closed with no event", want: "ended TASK_STATE_UNSPECIFIED"},
		{name: "send at input required", events: []string{workingTask, inputStatus}, want: "ok", n: 2},
		{name: "send at auth required", events: []string{workingTask, authStatus}, want: "ok", n: 2},
		{name: "send completed", events: []string{workingTask, doneStatus}, want: "ok", n: 2},
		{name: "subscribe at input required", subscribe: true, events: []string{workingTask, inputStatus}, want: "ended TASK_STATE_INPUT_REQUIRED", n: 2},
		{name: "subscribe completed", subscribe: true, events: []string{workingTask, doneStatus}, want: "ok", n: 2},
		{name: "server stops the stream", events: []string{workingTask}, end: connect.NewError(connect.CodeUnavailable, errors.New("stopping")),
			want: "cut TASK_STATE_WORKING", n: 1},
		{name: "deadline", subscribe: true, events: []string{workingTask}, end: connect.NewError(connect.CodeDeadlineExceeded, errors.New("late")),
			want: "cut TASK_STATE_WORKING", n: 1},
		{name: "A2A error after an event", events: []string{workingTask}, end: notFound, want: "TaskNotFoundError", n: 1},
		{name: "UNAVAILABLE before any event", end: connect.NewError(connect.CodeUnavailable, errors.New("draining")), want: "transport"},
		{name: "internal error before any event", end: connect.NewError(connect.CodeInternal, errors.New("boom")), want: "InternalError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkGRPCStreamEnd(t, tc)
		})
	}
}

// grpcStreamEndCase is a stream a fake gRPC server sends, and how it must
// end.
type grpcStreamEndCase struct {
	name      string
	subscribe bool
	events    []string
	end       error
	want      string // "ok", "ended STATE", "cut STATE", a code name, or "transport"
	n         int
}

// checkGRPCStreamEnd streams tc's events from a fake gRPC server and checks
// how the client reports the end.
func checkGRPCStreamEnd(t *testing.T, tc grpcStreamEndCase) {
	f := &fakeGRPC{end: tc.end}
	for _, js := range tc.events {
		f.events = append(f.events, streamEvent(t, js))
	}
	c := fakeGRPCClient(t, fakeService(f))
	ctx := testCtx(t)
	seq := c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("x")})
	if tc.subscribe {
		seq = c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "t1"})
	}
	evs, err := testkit.Collect(seq)
	for _, ev := range evs {
		if ev.Seq != 0 {
			t.Errorf("event with Seq %d on gRPC", ev.Seq)
		}
	}
	got := "ok"
	var se *client.StreamEndedError
	var te *client.TransportError
	var ae *a2a.Error
	switch {
	case err == nil:
	case errors.As(err, &se):
		got = "ended " + se.State.String()
		if se.Err != nil {
			got = "cut " + se.State.String()
			if !errors.As(err, &te) || te.Phase != client.PhaseStream || te.GRPCStatus == "" {
				t.Errorf("cut stream: %v, want a stream-phase TransportError with the gRPC status", err)
			}
		}
		if !errors.Is(err, client.ErrStreamEnded) {
			t.Errorf("errors.Is(%v, ErrStreamEnded) = false", err)
		}
		if tc.n > 0 && se.TaskID != "t1" {
			t.Errorf("TaskID = %q, want t1", se.TaskID)
		}
	case errors.As(err, &te):
		got = "transport"
		if te.GRPCStatus != "UNAVAILABLE" || !te.Temporary() {
			t.Errorf("TransportError %+v, want a temporary one with gRPC status UNAVAILABLE", te)
		}
	case errors.As(err, &ae):
		got = ae.Code.Name()
	default:
		t.Fatalf("error %v (%T)", err, err)
	}
	if got != tc.want || len(evs) != tc.n {
		t.Fatalf("%d events, then %s (%v); want %d events, then %s", len(evs), got, err, tc.n, tc.want)
	}
}

// TestGRPCStatusMapping: statuses from servers other than Parley become
// the right *a2a.Error (or TransportError) by ErrorInfo reason first, the
// gRPC code second.
func TestGRPCStatusMapping(t *testing.T) {
	t.Parallel()
	withDetails := func(code connect.Code, msg string, details ...proto.Message) *connect.Error {
		e := connect.NewError(code, errors.New(msg))
		for _, d := range details {
			ed, err := connect.NewErrorDetail(d)
			if err != nil {
				t.Fatal(err)
			}
			e.AddDetail(ed)
		}
		return e
	}
	cases := []struct {
		name  string
		err   error
		code  a2a.Code // 0: a TransportError
		check func(t *testing.T, e *a2a.Error)
	}{
		{"reason decides", withDetails(connect.CodeFailedPrecondition, "no",
			&errdetails.ErrorInfo{Reason: "TASK_NOT_CANCELABLE", Domain: a2a.DomainA2A, Metadata: map[string]string{"taskId": "t9"}}),
			a2a.CodeTaskNotCancelable, func(t *testing.T, e *a2a.Error) {
				if e.Metadata["taskId"] != "t9" || e.Message != "no" {
					t.Errorf("error %+v, want the message and metadata taskId", e)
				}
			}},
		{"the A2A domain wins", withDetails(connect.CodeFailedPrecondition, "x",
			&errdetails.ErrorInfo{Reason: "VERSION_NOT_SUPPORTED", Domain: a2a.DomainA2A},
			&errdetails.ErrorInfo{Reason: "QUOTA", Domain: "example.com"}),
			a2a.CodeVersionNotSupported, nil},
		{"violations", withDetails(connect.CodeInvalidArgument, "bad",
			&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "id", Description: "required"}}}),
			a2a.CodeInvalidParams, func(t *testing.T, e *a2a.Error) {
				if len(e.Violations) != 1 || e.Violations[0].Field != "id" {
					t.Errorf("violations %v", e.Violations)
				}
			}},
		{"NOT_FOUND", connect.NewError(connect.CodeNotFound, nil), a2a.CodeTaskNotFound, nil},
		{"FAILED_PRECONDITION", connect.NewError(connect.CodeFailedPrecondition, nil), a2a.CodeUnsupportedOperation, nil},
		{"UNIMPLEMENTED", connect.NewError(connect.CodeUnimplemented, nil), a2a.CodeMethodNotFound, nil},
		{"UNAUTHENTICATED", connect.NewError(connect.CodeUnauthenticated, nil), a2a.CodeUnauthenticated, nil},
		{"PERMISSION_DENIED", connect.NewError(connect.CodePermissionDenied, nil), a2a.CodePermissionDenied, nil},
		{"RESOURCE_EXHAUSTED", connect.NewError(connect.CodeResourceExhausted, nil), a2a.CodeRequestTooLarge, nil},
		{"UNKNOWN", connect.NewError(connect.CodeUnknown, nil), a2a.CodeInternal, func(t *testing.T, e *a2a.Error) {
			if e.Metadata["grpcStatus"] != "UNKNOWN" {
				t.Errorf("metadata %v, want grpcStatus UNKNOWN", e.Metadata)
			}
		}},
		{"UNAVAILABLE", connect.NewError(connect.CodeUnavailable, nil), 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := fakeGRPCClient(t, fakeService(&fakeGRPC{fail: tc.err}))
			_, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "t1"})
			var ae *a2a.Error
			var te *client.TransportError
			switch {
			case tc.code == 0:
				if !errors.As(err, &te) || !te.Temporary() || te.Phase != client.PhaseResponse {
					t.Fatalf("GetTask = %v (%T), want a temporary response-phase TransportError", err, err)
				}
			case !errors.As(err, &ae) || ae.Code != tc.code || !errors.Is(err, &a2a.Error{Code: tc.code}):
				t.Fatalf("GetTask = %v (%T), want %s", err, err, tc.code.Name())
			case tc.check != nil:
				tc.check(t, ae)
			}
		})
	}
}

// TestGRPCNotGRPC: answers that are not gRPC are transport failures (a
// proxy's 503 is temporary), or an authentication error for 401 and an
// authorization error for 403.
func TestGRPCNotGRPC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		ctype  string
		check  func(err error) bool
	}{
		{503, "text/plain", func(err error) bool {
			var te *client.TransportError
			return errors.As(err, &te) && te.StatusCode == 503 && te.Temporary() && te.Phase == client.PhaseResponse
		}},
		{401, "text/plain", func(err error) bool { return errors.Is(err, a2a.ErrUnauthenticated) }},
		{403, "text/plain", func(err error) bool { return errors.Is(err, a2a.ErrPermissionDenied) }},
		{200, "text/html", func(err error) bool {
			var te *client.TransportError
			return errors.As(err, &te) && te.Phase == client.PhaseResponse && !te.Temporary()
		}},
	} {
		t.Run(http.StatusText(tc.status)+" "+tc.ctype, func(t *testing.T) {
			t.Parallel()
			c := fakeGRPCClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				w.Write([]byte("<html>no</html>"))
			}))
			_, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "t1"})
			if !tc.check(err) {
				t.Fatalf("GetTask = %v (%T)", err, err)
			}
		})
	}
}

// TestGRPCTargets: the forms of a gRPC interface url that the transport
// accepts, and what it refuses when the client is made.
func TestGRPCTargets(t *testing.T) {
	t.Parallel()
	e := start(t, config{})
	host := hostOf(e.url)
	for _, target := range []string{host, "http://" + host, "http://" + host + "/", "dns:///" + host} {
		card := proto.Clone(e.card).(*a2a.AgentCard)
		card.SupportedInterfaces = []*a2a.AgentInterface{{Url: target, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"}}
		c, err := client.New(card, nil)
		if err != nil {
			t.Fatalf("New(%q) = %v", target, err)
		}
		if _, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTask via %q = %v, want TaskNotFound", target, err)
		}
		c.Close()
	}
	for _, target := range []string{"", "ftp://" + host, "http://" + host + "?x=1", host + "/path", "http://user@" + host} {
		card := proto.Clone(e.card).(*a2a.AgentCard)
		card.SupportedInterfaces = []*a2a.AgentInterface{{Url: target, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"}}
		if _, err := client.New(card, nil); err == nil || !strings.Contains(err.Error(), "gRPC interface URL") {
			t.Errorf("New(%q) = %v, want an error about the gRPC interface URL", target, err)
		}
	}
}

// TestGRPCOverTLS: with an HTTP client whose transport has a TLS
// configuration (here the test server's root), a host:port target is
// dialled over TLS, as parley serve --tls-cert serves it.
func TestGRPCOverTLS(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{
		TLS: true,
		Interfaces: func(base string) []*a2a.AgentInterface {
			return []*a2a.AgentInterface{{Url: hostOf(base), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"}}
		},
		Configure: func(hs *httptest.Server) {
			hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the cleartext attempt below
		},
	})
	card := s.Card
	ctx := testCtx(t)
	c, err := client.New(card, &client.Options{HTTPClient: s.HTTP.Client(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
	if err != nil || len(evs) < 4 {
		t.Fatalf("SendStreamingMessage over TLS = %q, %v", testkit.Kinds(evs), err)
	}
	// Without the TLS configuration the same target is dialled in
	// cleartext, which a TLS port does not answer: a transport failure.
	plain, err := client.New(card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, err = plain.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
	var te *client.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("GetTask in cleartext on a TLS port = %v (%T), want a TransportError", err, err)
	}
}
