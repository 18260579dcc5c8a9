package v03grpc_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/v03/v03grpc"
	"parley.dev/parley/internal/v03/v03pb"
)

func unary[Req, Resp any](hc *http.Client, base, name string) *connect.Client[Req, Resp] {
	return connect.NewClient[Req, Resp](hc, base+"/"+v03grpc.ServiceName+"/"+name, connect.WithGRPC())
}

func text(s string) []*v03pb.Part { return []*v03pb.Part{{Part: &v03pb.Part_Text{Text: s}}} }

// TestV03GRPC: every rpc of a2a.v1.A2AService on the real wire (gRPC over
// h2c), the task shared with v1.0, errors with their gRPC codes.
func TestV03GRPC(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{Quiet: true})
	hc := testkit.H2CClient()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	send := unary[v03pb.SendMessageRequest, v03pb.SendMessageResponse](hc, s.URL, "SendMessage")
	resp, err := send.CallUnary(ctx, connect.NewRequest(&v03pb.SendMessageRequest{Request: &v03pb.Message{
		MessageId: "g-1", Role: v03pb.Role_ROLE_USER, Content: text("hello grpc")}}))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := resp.Msg.GetTask()
	if task.GetStatus().GetState() != v03pb.TaskState_TASK_STATE_COMPLETED || task.GetArtifacts()[0].GetParts()[0].GetText() != "hello grpc" {
		t.Fatalf("SendMessage: %v", resp.Msg)
	}
	// The task over v1.0.
	got, err := s.Core.GetTask(a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: "1.0"}), &a2a.GetTaskRequest{Id: task.GetId()})
	if err != nil || got.GetHistory()[0].GetMessageId() != "g-1" {
		t.Errorf("v1.0 GetTask: %v, %v", got, err)
	}
	get := unary[v03pb.GetTaskRequest, v03pb.Task](hc, s.URL, "GetTask")
	if g, err := get.CallUnary(ctx, connect.NewRequest(&v03pb.GetTaskRequest{Name: "tasks/" + task.GetId(), HistoryLength: 1})); err != nil || len(g.Msg.GetHistory()) != 1 {
		t.Errorf("GetTask: %v, %v", g, err)
	}
	_, err = get.CallUnary(ctx, connect.NewRequest(&v03pb.GetTaskRequest{Name: "tasks/nope"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetTask of an unknown task: %v, want NOT_FOUND", err)
	}
	if _, err = get.CallUnary(ctx, connect.NewRequest(&v03pb.GetTaskRequest{Name: "nope"})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("GetTask with a bad name: %v, want INVALID_ARGUMENT", err)
	}

	stream := connect.NewClient[v03pb.SendMessageRequest, v03pb.StreamResponse](hc, s.URL+"/"+v03grpc.ServiceName+"/SendStreamingMessage", connect.WithGRPC())
	ss, err := stream.CallServerStream(ctx, connect.NewRequest(&v03pb.SendMessageRequest{Request: &v03pb.Message{
		MessageId: "g-2", Role: v03pb.Role_ROLE_USER, Content: text("input-required")}}))
	if err != nil {
		t.Fatal(err)
	}
	var id string
	var last *v03pb.StreamResponse
	for ss.Receive() {
		if t := ss.Msg().GetTask(); t != nil {
			id = t.GetId()
		}
		last = ss.Msg()
	}
	if ss.Err() != nil || id == "" || !last.GetStatusUpdate().GetFinal() || last.GetStatusUpdate().GetStatus().GetState() != v03pb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("SendStreamingMessage: last %v, err %v", last, ss.Err())
	}

	create := unary[v03pb.CreateTaskPushNotificationConfigRequest, v03pb.TaskPushNotificationConfig](hc, s.URL, "CreateTaskPushNotificationConfig")
	c, err := create.CallUnary(ctx, connect.NewRequest(&v03pb.CreateTaskPushNotificationConfigRequest{Parent: "tasks/" + id, ConfigId: "c1",
		Config: &v03pb.TaskPushNotificationConfig{PushNotificationConfig: &v03pb.PushNotificationConfig{Url: "https://hooks.example/g", Token: "t"}}}))
	if err != nil || c.Msg.GetName() != "tasks/"+id+"/pushNotificationConfigs/c1" || c.Msg.GetPushNotificationConfig().GetUrl() != "https://hooks.example/g" {
		t.Fatalf("Create: %v, %v", c, err)
	}
	gc := unary[v03pb.GetTaskPushNotificationConfigRequest, v03pb.TaskPushNotificationConfig](hc, s.URL, "GetTaskPushNotificationConfig")
	if g, err := gc.CallUnary(ctx, connect.NewRequest(&v03pb.GetTaskPushNotificationConfigRequest{Name: c.Msg.GetName()})); err != nil || g.Msg.GetPushNotificationConfig().GetToken() != "t" {
		t.Errorf("Get config: %v, %v", g, err)
	}
	lc := unary[v03pb.ListTaskPushNotificationConfigRequest, v03pb.ListTaskPushNotificationConfigResponse](hc, s.URL, "ListTaskPushNotificationConfig")
	if l, err := lc.CallUnary(ctx, connect.NewRequest(&v03pb.ListTaskPushNotificationConfigRequest{Parent: "tasks/" + id})); err != nil || len(l.Msg.GetConfigs()) != 1 {
		t.Errorf("List configs: %v, %v", l, err)
	}
	dc := unary[v03pb.DeleteTaskPushNotificationConfigRequest, emptypb.Empty](hc, s.URL, "DeleteTaskPushNotificationConfig")
	if _, err := dc.CallUnary(ctx, connect.NewRequest(&v03pb.DeleteTaskPushNotificationConfigRequest{Name: c.Msg.GetName()})); err != nil {
		t.Errorf("Delete config: %v", err)
	}

	// Subscribe, then cancel: snapshot first, final CANCELLED last.
	sub := connect.NewClient[v03pb.TaskSubscriptionRequest, v03pb.StreamResponse](hc, s.URL+"/"+v03grpc.ServiceName+"/TaskSubscription", connect.WithGRPC())
	st, err := sub.CallServerStream(ctx, connect.NewRequest(&v03pb.TaskSubscriptionRequest{Name: "tasks/" + id}))
	if err != nil || !st.Receive() || st.Msg().GetTask().GetId() != id {
		t.Fatalf("TaskSubscription: %v %v", err, st.Err())
	}
	cancelc := unary[v03pb.CancelTaskRequest, v03pb.Task](hc, s.URL, "CancelTask")
	if ct, err := cancelc.CallUnary(ctx, connect.NewRequest(&v03pb.CancelTaskRequest{Name: "tasks/" + id})); err != nil || ct.Msg.GetStatus().GetState() != v03pb.TaskState_TASK_STATE_CANCELLED {
		t.Fatalf("CancelTask: %v, %v", ct, err)
	}
	for st.Receive() {
		last = st.Msg()
	}
	if last.GetStatusUpdate().GetStatus().GetState() != v03pb.TaskState_TASK_STATE_CANCELLED || !last.GetStatusUpdate().GetFinal() {
		t.Errorf("subscription ended with %v (%v)", last, st.Err())
	}

	card := unary[v03pb.GetAgentCardRequest, v03pb.AgentCard](hc, s.URL, "GetAgentCard")
	if cd, err := card.CallUnary(ctx, connect.NewRequest(&v03pb.GetAgentCardRequest{})); err != nil || cd.Msg.GetName() != s.Card.GetName() || cd.Msg.GetPreferredTransport() != "JSONRPC" {
		t.Errorf("GetAgentCard: %v, %v", cd, err)
	}

	// A v1.0 shape: a message without content is INVALID_ARGUMENT naming it.
	_, err = send.CallUnary(ctx, connect.NewRequest(&v03pb.SendMessageRequest{Request: &v03pb.Message{MessageId: "g-3", Role: v03pb.Role_ROLE_USER}}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.Contains(ce.Message(), "message.content") {
		t.Errorf("SendMessage without content: %v", err)
	}
	// An unsupported version.
	req := connect.NewRequest(&v03pb.GetTaskRequest{Name: "tasks/" + id})
	req.Header().Set("A2A-Version", "9.9")
	if _, err := get.CallUnary(ctx, req); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("A2A-Version 9.9: %v", err)
	}
}
