package grpcbind_test

import (
	"bufio"
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// service is the conformance agent on an in-memory store, for the tests
// that put the gRPC binding alone in front of it.
func service(t *testing.T, mutate func(*a2a.AgentCard, *server.Options)) (*server.Server, *a2a.AgentCard) {
	t.Helper()
	return testkit.NewCore(t, []*a2a.AgentInterface{
		{Url: "127.0.0.1:1", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
	}, &testkit.Options{Mutate: mutate})
}

// serveGRPC serves h on a loopback port with HTTP/1.1 and cleartext HTTP/2,
// as `parley serve` does, and returns its base URL and an HTTP/2 client.
func serveGRPC(t *testing.T, h http.Handler) (string, *http.Client) {
	t.Helper()
	return testkit.ServeH2C(t, h, nil).URL, testkit.H2CClient()
}

func v1[T any](msg *T) *connect.Request[T] {
	req := connect.NewRequest(msg)
	req.Header().Set("A2A-Version", "1.0")
	return req
}

func textMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readSpecFields reads testdata/spec_fields.txt: message name → field name
// → number.
func readSpecFields(t *testing.T) map[string]map[string]int {
	t.Helper()
	f, err := os.Open("testdata/spec_fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, ": ")
		fields := map[string]int{}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("spec_fields.txt: %q", line)
			}
			fields[k] = n
		}
		out[name] = fields
	}
	return out
}

// TestReflection lists the services over gRPC server reflection and checks
// that the reflected descriptors are the generated ones and match the
// spec's messages field for field.
func TestReflection(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, nil)
	stream := grpcreflect.NewClient(testkit.H2CClient(), s.URL, connect.WithGRPC()).NewStream(testCtx(t))
	defer stream.Close()

	names, err := stream.ListServices()
	if err != nil {
		t.Fatalf("ListServices: %v", err)
	}
	for _, want := range []protoreflect.FullName{a2aconnect.A2AServiceName, grpcbind.HealthService, grpcbind.ReflectionService} {
		if !slices.Contains(names, want) {
			t.Errorf("ListServices() = %v, want it to contain %s", names, want)
		}
	}

	files, err := stream.FileContainingSymbol(a2aconnect.A2AServiceName)
	if err != nil {
		t.Fatalf("FileContainingSymbol: %v", err)
	}
	var got *descriptorpb.FileDescriptorProto
	for _, f := range files {
		if f.GetPackage() == "lf.a2a.v1" {
			got = f
		}
	}
	if got == nil {
		t.Fatalf("no lf.a2a.v1 file among %d reflected files", len(files))
	}
	want := protodesc.ToFileDescriptorProto(a2a.File_a2a_proto)
	if !proto.Equal(got, want) {
		t.Errorf("reflected a2a.proto differs from the generated descriptor")
	}

	// The reflected files resolve, with their imports, into a registry.
	reg, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: files})
	if err != nil {
		t.Fatalf("reflected files do not resolve: %v", err)
	}
	checkSpecMessages(t, reg)
	checkServiceMethods(t, reg)
}

// previewFields are the fields the A2A 1.1 draft adds to v1.0's messages
// (its dev-1.1 branch; Parley serves them as a preview, to 1.1 callers
// only), by message, name and number.
var previewFields = map[string]map[string]int{
	"Task":                     {"generation": 7, "timeline": 8},
	"Artifact":                 {"start_generation": 7, "end_generation": 8},
	"TaskStatusUpdateEvent":    {"generation": 5},
	"TaskArtifactUpdateEvent":  {"generation": 7},
	"GetTaskRequest":           {"current_generation": 4, "timeline_length": 5},
	"ListTasksRequest":         {"timeline_length": 9},
	"SendMessageConfiguration": {"if_generation_match": 5, "timeline_length": 6},
}

// previewMessages are the messages the A2A 1.1 draft adds (PR #2129's
// task timeline), with their fields by name and number.
var previewMessages = map[string]map[string]int{
	"TimelineEntry": {"message": 1, "status": 2, "generation": 3},
}

// checkSpecMessages checks that the reflected messages are the spec's,
// field for field (testdata/spec_fields.txt), and that the proto has no
// message the spec lacks.
func checkSpecMessages(t *testing.T, reg *protoregistry.Files) {
	t.Helper()
	spec := readSpecFields(t)
	if len(spec) != 44 {
		t.Fatalf("spec_fields.txt lists %d messages, want 44", len(spec))
	}
	for name, fields := range spec {
		d, err := reg.FindDescriptorByName(protoreflect.FullName("lf.a2a.v1." + name))
		if err != nil {
			t.Errorf("message %s is not in the reflected descriptors", name)
			continue
		}
		md := d.(protoreflect.MessageDescriptor)
		if want := len(fields) + len(previewFields[name]); md.Fields().Len() != want {
			t.Errorf("%s has %d fields, the spec %d", name, md.Fields().Len(), want)
		}
		for fname, num := range previewFields[name] {
			if fd := md.Fields().ByName(protoreflect.Name(fname)); fd == nil || int(fd.Number()) != num {
				t.Errorf("%s.%s (A2A 1.1 preview): reflected %v, want #%d", name, fname, fd, num)
			}
		}
		for fname, num := range fields {
			fd := md.Fields().ByName(protoreflect.Name(fname))
			if fd == nil || int(fd.Number()) != num {
				t.Errorf("%s.%s: reflected %v, spec #%d", name, fname, fd, num)
			}
		}
	}
	for name, fields := range previewMessages {
		d, err := reg.FindDescriptorByName(protoreflect.FullName("lf.a2a.v1." + name))
		if err != nil {
			t.Errorf("message %s (A2A 1.1 preview) is not in the reflected descriptors", name)
			continue
		}
		md := d.(protoreflect.MessageDescriptor)
		if md.Fields().Len() != len(fields) {
			t.Errorf("%s (A2A 1.1 preview) has %d fields, want %d", name, md.Fields().Len(), len(fields))
		}
		for fname, num := range fields {
			if fd := md.Fields().ByName(protoreflect.Name(fname)); fd == nil || int(fd.Number()) != num {
				t.Errorf("%s.%s (A2A 1.1 preview): reflected %v, want #%d", name, fname, fd, num)
			}
		}
	}
	// Every message of the proto is a spec message or a preview one.
	msgs := a2a.File_a2a_proto.Messages()
	for i := range msgs.Len() {
		name := string(msgs.Get(i).Name())
		if _, ok := spec[name]; !ok && previewMessages[name] == nil {
			t.Errorf("message %s is not in the spec", name)
		}
	}
}

// checkServiceMethods checks that the reflected service has the eleven
// operations of the method table, the two streaming ones as server streams.
func checkServiceMethods(t *testing.T, reg *protoregistry.Files) {
	t.Helper()
	sd, err := reg.FindDescriptorByName(a2aconnect.A2AServiceName)
	if err != nil {
		t.Fatal(err)
	}
	methods := sd.(protoreflect.ServiceDescriptor).Methods()
	table := slices.Collect(a2a.Methods())
	if methods.Len() != len(table) {
		t.Fatalf("service has %d methods, want %d", methods.Len(), len(table))
	}
	for _, m := range table {
		md := methods.ByName(protoreflect.Name(m.Name))
		if md == nil {
			t.Errorf("method %s missing", m.Name)
			continue
		}
		if md.IsStreamingServer() != m.Streaming || md.IsStreamingClient() {
			t.Errorf("%s: server streaming %v, client streaming %v", m.Name, md.IsStreamingServer(), md.IsStreamingClient())
		}
		if md.Input().FullName() != m.NewRequest().ProtoReflect().Descriptor().FullName() {
			t.Errorf("%s takes %s", m.Name, md.Input().FullName())
		}
	}
}

func TestReflectionOff(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{HTTP: func(o *a2ahttp.Options) {
		o.GRPC = &grpcbind.Options{DisableReflection: true}
	}})
	client := testkit.H2CClient()
	stream := grpcreflect.NewClient(client, s.URL, connect.WithGRPC()).NewStream(testCtx(t))
	defer stream.Close()
	_, err := stream.ListServices()
	if connect.CodeOf(err) != connect.CodeUnimplemented {
		t.Fatalf("ListServices() with reflection off: %v, want Unimplemented", err)
	}
	// Health is still served.
	res, err := grpchealth.NewClient(client, s.URL, connect.WithGRPC()).Check(testCtx(t), &grpchealth.CheckRequest{})
	if err != nil || res.Status != grpchealth.StatusServing {
		t.Fatalf("Check() = %v, %v", res, err)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	g := grpcbind.NewHandler(srv, nil)
	base, client := serveGRPC(t, g)
	hc := grpchealth.NewClient(client, base, connect.WithGRPC())
	for _, svc := range []string{"", a2aconnect.A2AServiceName} {
		res, err := hc.Check(testCtx(t), &grpchealth.CheckRequest{Service: svc})
		if err != nil || res.Status != grpchealth.StatusServing {
			t.Fatalf("Check(%q) = %v, %v; want SERVING", svc, res, err)
		}
	}
	if _, err := hc.Check(testCtx(t), &grpchealth.CheckRequest{Service: "no.such.Service"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("Check(unknown) = %v, want NotFound", err)
	}
	g.SetServing(false)
	res, err := hc.Check(testCtx(t), &grpchealth.CheckRequest{Service: a2aconnect.A2AServiceName})
	if err != nil || res.Status != grpchealth.StatusNotServing {
		t.Fatalf("Check() after SetServing(false) = %v, %v", res, err)
	}
}

// TestHealthFollowsReadiness: with Options.Ready the health service
// reports NOT_SERVING while it fails, and SERVING again once it succeeds.
func TestHealthFollowsReadiness(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	var down atomic.Bool
	g := grpcbind.NewHandler(srv, &grpcbind.Options{Ready: func(context.Context) error {
		if down.Load() {
			return errors.New("the store cannot write")
		}
		return nil
	}})
	base, client := serveGRPC(t, g)
	hc := grpchealth.NewClient(client, base, connect.WithGRPC())
	for _, c := range []struct {
		down bool
		want grpchealth.Status
	}{{false, grpchealth.StatusServing}, {true, grpchealth.StatusNotServing}, {false, grpchealth.StatusServing}} {
		down.Store(c.down)
		res, err := hc.Check(testCtx(t), &grpchealth.CheckRequest{Service: a2aconnect.A2AServiceName})
		if err != nil || res.Status != c.want {
			t.Fatalf("store down %v: Check() = %v, %v; want %v", c.down, res, err, c.want)
		}
	}
}

func TestUnknownMethod(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	base, client := serveGRPC(t, grpcbind.NewHandler(srv, nil))
	for _, path := range []string{"/lf.a2a.v1.A2AService/NoSuchMethod", "/no.such.Service/Method"} {
		c := connect.NewClient[emptypb.Empty, emptypb.Empty](client, base+path, connect.WithGRPC())
		_, err := c.CallUnary(testCtx(t), connect.NewRequest(&emptypb.Empty{}))
		if connect.CodeOf(err) != connect.CodeUnimplemented || !connect.IsWireError(err) {
			t.Errorf("%s: %v, want a gRPC UNIMPLEMENTED status", path, err)
		}
	}
}

// TestStatus checks the error mapping of spec §5.4 and §10.6 for every
// code, directly on the converter.
func TestStatus(t *testing.T) {
	codes := []a2a.Code{
		a2a.CodeTaskNotFound, a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported,
		a2a.CodeUnsupportedOperation, a2a.CodeContentTypeNotSupported, a2a.CodeInvalidAgentResponse,
		a2a.CodeExtendedAgentCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported,
		a2a.CodeTaskGenerationMismatch,
		a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeMethodNotFound, a2a.CodeInvalidParams,
		a2a.CodeInternal, a2a.CodeUnauthenticated, a2a.CodeRequestTooLarge,
	}
	want := map[a2a.Code]connect.Code{
		a2a.CodeTaskNotFound:                   connect.CodeNotFound,
		a2a.CodeTaskNotCancelable:              connect.CodeFailedPrecondition,
		a2a.CodePushNotificationNotSupported:   connect.CodeFailedPrecondition,
		a2a.CodeUnsupportedOperation:           connect.CodeFailedPrecondition,
		a2a.CodeContentTypeNotSupported:        connect.CodeInvalidArgument,
		a2a.CodeInvalidAgentResponse:           connect.CodeInternal,
		a2a.CodeExtendedAgentCardNotConfigured: connect.CodeFailedPrecondition,
		a2a.CodeExtensionSupportRequired:       connect.CodeFailedPrecondition,
		a2a.CodeVersionNotSupported:            connect.CodeFailedPrecondition,
		a2a.CodeTaskGenerationMismatch:         connect.CodeAborted,
		a2a.CodeParseError:                     connect.CodeInvalidArgument,
		a2a.CodeInvalidRequest:                 connect.CodeInvalidArgument,
		a2a.CodeMethodNotFound:                 connect.CodeUnimplemented,
		a2a.CodeInvalidParams:                  connect.CodeInvalidArgument,
		a2a.CodeInternal:                       connect.CodeInternal,
		a2a.CodeUnauthenticated:                connect.CodeUnauthenticated,
		a2a.CodeRequestTooLarge:                connect.CodeResourceExhausted,
	}
	for _, c := range codes {
		e := a2a.NewError(c, "boom").WithMeta("taskId", "t-1")
		e.Violations = []a2a.FieldViolation{{Field: "message.parts", Description: "is required"}}
		st := grpcbind.Status(e)
		if st.Code() != want[c] || st.Message() != "boom" {
			t.Errorf("Status(%s) = %v %q, want %v", c.Name(), st.Code(), st.Message(), want[c])
		}
		var info *errdetails.ErrorInfo
		var br *errdetails.BadRequest
		for _, d := range st.Details() {
			v, err := d.Value()
			if err != nil {
				t.Fatal(err)
			}
			switch x := v.(type) {
			case *errdetails.ErrorInfo:
				info = x
			case *errdetails.BadRequest:
				br = x
			}
		}
		if c.IsA2A() {
			if info == nil || info.Reason != c.Reason() || info.Domain != "a2a-protocol.org" || info.Metadata["taskId"] != "t-1" {
				t.Errorf("Status(%s) ErrorInfo = %v", c.Name(), info)
			}
		} else if reason, _, _ := a2a.NewError(c, "").WithMeta("k", "v").Info(); info == nil || info.Reason != reason || info.Domain != a2a.DomainParley || info.Metadata["taskId"] != "t-1" {
			// A non-A2A error carries its metadata in Parley's domain.
			t.Errorf("Status(%s) ErrorInfo = %v, want reason %s in %s with the metadata", c.Name(), info, reason, a2a.DomainParley)
		}
		_, _, parleys := a2a.NewError(c, "").Info()
		if info := grpcbind.Status(a2a.NewError(c, "no metadata")).Details(); !c.IsA2A() && !parleys && len(info) != 0 {
			t.Errorf("Status(%s) without metadata has details %v", c.Name(), info)
		}
		// Every code with a reason comes back as itself through the
		// client's reading of the status (RESOURCE_EXHAUSTED is two codes:
		// the reason tells); the others share their gRPC status.
		if got := grpcbind.StatusError(grpcbind.Status(a2a.NewError(c, "x"))); (c.IsA2A() || parleys) && (got == nil || got.Code != c) {
			t.Errorf("Status(%s) read back as %v", c.Name(), got)
		}
		if br == nil || len(br.FieldViolations) != 1 || br.FieldViolations[0].Field != "message.parts" {
			t.Errorf("Status(%s) BadRequest = %v", c.Name(), br)
		}
	}
}

// spy records when the streams it serves end.
type spy struct {
	a2a.Service
	ended chan struct{}
}

func (s *spy) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		defer close(s.ended)
		for ev, err := range s.Service.SendStreamingMessage(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestClientGoesAway: when the client cancels a stream, the server's side
// ends at once (the core releases the subscription) and the task goes on.
func TestClientGoesAway(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	sp := &spy{Service: srv, ended: make(chan struct{})}
	base, client := serveGRPC(t, grpcbind.NewHandler(sp, nil))
	c := a2aconnect.NewA2AServiceClient(client, base, connect.WithGRPC())
	ctx, cancel := context.WithCancel(testCtx(t))
	stream, err := c.SendStreamingMessage(ctx, v1(textMessage("slow 800")))
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	id := stream.Msg().GetTask().GetId()
	cancel()
	// Waits are bounded by the test's context, not a few seconds: under
	// -race on a loaded machine the server and the 800 ms task can take
	// longer, and what is proven is that the stream ends and the task
	// completes, not how fast.
	wait := testCtx(t)
	select {
	case <-sp.ended:
	case <-wait.Done():
		t.Fatal("the server-side stream did not end after the client cancelled")
	}
	stream.Close()
	for {
		task, err := c.GetTask(wait, v1(&a2a.GetTaskRequest{Id: id}))
		if err != nil {
			t.Fatalf("task after the client went away: %v", err)
		}
		if task.Msg.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGracefulStop: stopping the server (cancel the requests' base context,
// then Shutdown) ends an open stream with the status UNAVAILABLE, in a
// proper trailer, and Shutdown returns promptly.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	baseCtx, stopRequests := context.WithCancel(context.Background())
	defer stopRequests()
	s := testkit.StartServer(t, &testkit.Options{Configure: func(hs *httptest.Server) {
		hs.Config.BaseContext = func(net.Listener) context.Context { return baseCtx }
	}})
	c := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())
	created, err := c.SendMessage(testCtx(t), v1(&a2a.SendMessageRequest{
		Message:       textMessage("slow 10000").Message,
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	}))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.SubscribeToTask(testCtx(t), v1(&a2a.SubscribeToTaskRequest{Id: created.Msg.GetTask().GetId()}))
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() || stream.Msg().GetTask() == nil {
		t.Fatalf("first event: %v %v", stream.Msg(), stream.Err())
	}
	var wg sync.WaitGroup
	var shutdownErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		stopRequests()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.HTTP.Config.Shutdown(ctx); err != nil {
			shutdownErr.Store(err)
		}
	}()
	for stream.Receive() {
	}
	if code := connect.CodeOf(stream.Err()); code != connect.CodeUnavailable {
		t.Fatalf("stream ended with %v, want Unavailable", stream.Err())
	}
	if !connect.IsWireError(stream.Err()) {
		t.Fatalf("the status did not come from the server: %v", stream.Err())
	}
	wg.Wait()
	if err := shutdownErr.Load(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestMessageLimit: a request over MaxRecvBytes is refused with
// RESOURCE_EXHAUSTED and the server keeps serving.
func TestMessageLimit(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	base, client := serveGRPC(t, grpcbind.NewHandler(srv, &grpcbind.Options{MaxRecvBytes: 64 << 10}))
	c := a2aconnect.NewA2AServiceClient(client, base, connect.WithGRPC())
	_, err := c.SendMessage(testCtx(t), v1(textMessage(strings.Repeat("x", 100<<10))))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("oversized request: %v, want ResourceExhausted", err)
	}
	res, err := c.SendMessage(testCtx(t), v1(textMessage("hello")))
	if err != nil || res.Msg.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("after the refusal: %v %v", res, err)
	}
}

// TestTLS: the same handler serves gRPC over HTTP/2 with TLS.
func TestTLS(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{TLS: true})
	c := a2aconnect.NewA2AServiceClient(s.HTTP.Client(), s.URL, connect.WithGRPC())
	res, err := c.SendMessage(testCtx(t), v1(textMessage("over tls")))
	if err != nil || a2a.JoinText(res.Msg.GetTask().GetArtifacts()[0].GetParts()) != "over tls" {
		t.Fatalf("SendMessage over TLS: %v %v", res, err)
	}
}

// TestOnlyGRPC: connect-go's own Connect protocol (and plain HTTP) is not
// served by the binding.
func TestOnlyGRPC(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	base, client := serveGRPC(t, grpcbind.NewHandler(srv, nil))
	c := a2aconnect.NewA2AServiceClient(client, base) // the Connect protocol
	_, err := c.GetTask(testCtx(t), v1(&a2a.GetTaskRequest{Id: "x"}))
	if connect.CodeOf(err) == connect.CodeNotFound || err == nil {
		t.Fatalf("a Connect-protocol call was served: %v", err)
	}
	resp, err := http.Post(base+"/lf.a2a.v1.A2AService/GetTask", "application/json", strings.NewReader(`{"id":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("plain JSON POST: %d, want 415", resp.StatusCode)
	}
}

// queryAdder adds a query string to every request it sends.
type queryAdder struct {
	rt    http.RoundTripper
	query string
}

func (q queryAdder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.RawQuery = q.query
	return q.rt.RoundTrip(r)
}

// TestVersionOnlyFromMetadata: on gRPC, service parameters are metadata
// (spec §10.2); the HTTP bindings' A2A-Version query-parameter fallback
// does not apply.
func TestVersionOnlyFromMetadata(t *testing.T) {
	t.Parallel()
	srv, _ := service(t, nil)
	base, client := serveGRPC(t, grpcbind.NewHandler(srv, nil))
	client.Transport = queryAdder{rt: client.Transport, query: "A2A-Version=1.0"}
	c := a2aconnect.NewA2AServiceClient(client, base, connect.WithGRPC())
	_, err := c.GetTask(testCtx(t), connect.NewRequest(&a2a.GetTaskRequest{Id: "x"}))
	if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "A2A-Version") {
		t.Fatalf("GetTask without a2a-version metadata = %v, want VersionNotSupported (FAILED_PRECONDITION)", err)
	}
	_, err = c.GetTask(testCtx(t), v1(&a2a.GetTaskRequest{Id: "x"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("GetTask with metadata = %v, want NOT_FOUND", err)
	}
}
