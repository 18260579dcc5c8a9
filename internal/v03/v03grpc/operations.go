package v03grpc

import (
	"context"
	"encoding/json"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/v03/v03pb"
)

type protoMessage = proto.Message

// toCodec reads a v0.3 proto message into one of package v03's ProtoJSON
// shapes, through its JSON form.
func toCodec(m proto.Message, out any) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return a2a.NewError(a2a.CodeInvalidParams, "%v", err)
	}
	return v03.Decode(b, out)
}

// fromCodec writes one of package v03's ProtoJSON shapes into a v0.3 proto
// message.
func fromCodec(v any, out proto.Message) error {
	b, err := json.Marshal(v)
	if err != nil {
		return a2a.Internal(err)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, out); err != nil {
		return a2a.Internal(err)
	}
	return nil
}

// taskOf reads a resource name tasks/{id}.
func taskOf(name string) (string, error) {
	id, ok := strings.CutPrefix(name, "tasks/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", a2a.InvalidParams(a2a.FieldViolation{Field: "name", Description: "must be tasks/{id}, got " + quote(name)})
	}
	return id, nil
}

// configOf reads a resource name tasks/{id}/pushNotificationConfigs/{configId}.
func configOf(name string) (string, string, error) {
	rest, ok := strings.CutPrefix(name, "tasks/")
	id, cfg, ok2 := strings.Cut(rest, "/pushNotificationConfigs/")
	if !ok || !ok2 || id == "" || cfg == "" || strings.Contains(cfg, "/") {
		return "", "", a2a.InvalidParams(a2a.FieldViolation{Field: "name", Description: "must be tasks/{id}/pushNotificationConfigs/{configId}, got " + quote(name)})
	}
	return id, cfg, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func (h *Handler) sendRequest(m *v03pb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	var p v03.PSendRequest
	if err := toCodec(m, &p); err != nil {
		return nil, err
	}
	return v03.PSendToV1(&p)
}

func (h *Handler) sendMessage(ctx context.Context, req *connect.Request[v03pb.SendMessageRequest]) (*connect.Response[v03pb.SendMessageResponse], error) {
	sr, err := h.sendRequest(req.Msg)
	if err != nil {
		return nil, h.fail(ctx, a2a.MethodSendMessage, err)
	}
	resp, err := h.call(ctx, req.Header(), a2a.MethodSendMessage, sr)
	if err != nil {
		return nil, err
	}
	out := &v03pb.SendMessageResponse{}
	if err := fromCodec(v03.PSendResultFromV1(resp.(*a2a.SendMessageResponse)), out); err != nil {
		return nil, h.fail(ctx, a2a.MethodSendMessage, err)
	}
	return connect.NewResponse(out), nil
}

// v03Key names the v0.3 translation of an event in its a2a.EventCache:
// a SubscribeToTask stream's differs from a SendStreamingMessage one's.
var v03Key = map[bool]string{false: "v0.3 grpc", true: "v0.3 grpc subscribe"}

// stream relays a v1.0 stream as v0.3 StreamResponses.
func (h *Handler) stream(ctx context.Context, md map[string][]string, name string, req proto.Message, subscribe bool, out *connect.ServerStream[v03pb.StreamResponse]) error {
	ctx, err := begin(ctx, md)
	if err != nil {
		return h.fail(ctx, name, err)
	}
	gate := grpcbind.FlushGateFrom(ctx)
	defer gate.Hold(false) // connect-go's last flush, after the status, goes out
	for ev, err := range h.inv.Stream(ctx, a2a.MethodByName(name), req) {
		if err != nil {
			return h.fail(ctx, name, err)
		}
		// An event several streams carry is translated once for all of
		// them (a2a.EventCache); connect-go only reads the message.
		v, err := ev.Cache.Load(ev.Response, v03Key[subscribe], func() (any, error) {
			msg := &v03pb.StreamResponse{}
			return msg, fromCodec(v03.PEventFromV1(ev.Response, subscribe), msg)
		})
		if err != nil {
			return h.fail(ctx, name, err)
		}
		gate.Hold(ev.More) // the next event is at hand: one write for both
		if err := out.Send(v.(*v03pb.StreamResponse)); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) sendStreaming(ctx context.Context, req *connect.Request[v03pb.SendMessageRequest], out *connect.ServerStream[v03pb.StreamResponse]) error {
	sr, err := h.sendRequest(req.Msg)
	if err != nil {
		return h.fail(ctx, a2a.MethodSendStreamingMessage, err)
	}
	return h.stream(ctx, req.Header(), a2a.MethodSendStreamingMessage, sr, false, out)
}

func (h *Handler) subscribe(ctx context.Context, req *connect.Request[v03pb.TaskSubscriptionRequest], out *connect.ServerStream[v03pb.StreamResponse]) error {
	id, err := taskOf(req.Msg.GetName())
	if err != nil {
		return h.fail(ctx, a2a.MethodSubscribeToTask, err)
	}
	return h.stream(ctx, req.Header(), a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, true, out)
}

// task answers an operation whose result is a task.
func (h *Handler) task(ctx context.Context, md map[string][]string, name string, req proto.Message) (*connect.Response[v03pb.Task], error) {
	resp, err := h.call(ctx, md, name, req)
	if err != nil {
		return nil, err
	}
	out := &v03pb.Task{}
	if err := fromCodec(v03.PTaskFromV1(resp.(*a2a.Task)), out); err != nil {
		return nil, h.fail(ctx, name, err)
	}
	return connect.NewResponse(out), nil
}

func (h *Handler) getTask(ctx context.Context, req *connect.Request[v03pb.GetTaskRequest]) (*connect.Response[v03pb.Task], error) {
	id, err := taskOf(req.Msg.GetName())
	if err != nil {
		return nil, h.fail(ctx, a2a.MethodGetTask, err)
	}
	g := &a2a.GetTaskRequest{Id: id}
	if n := req.Msg.GetHistoryLength(); n != 0 { // the proto's int32: 0 is "unset"
		g.HistoryLength = &n
	}
	return h.task(ctx, req.Header(), a2a.MethodGetTask, g)
}

func (h *Handler) cancelTask(ctx context.Context, req *connect.Request[v03pb.CancelTaskRequest]) (*connect.Response[v03pb.Task], error) {
	id, err := taskOf(req.Msg.GetName())
	if err != nil {
		return nil, h.fail(ctx, a2a.MethodCancelTask, err)
	}
	return h.task(ctx, req.Header(), a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: id})
}

// config answers an operation whose result is a push configuration.
func (h *Handler) config(ctx context.Context, md map[string][]string, name string, req proto.Message) (*connect.Response[v03pb.TaskPushNotificationConfig], error) {
	resp, err := h.call(ctx, md, name, req)
	if err != nil {
		return nil, err
	}
	out := &v03pb.TaskPushNotificationConfig{}
	if err := fromCodec(v03.PPushConfigFromV1(resp.(*a2a.TaskPushNotificationConfig)), out); err != nil {
		return nil, h.fail(ctx, name, err)
	}
	return connect.NewResponse(out), nil
}

func (h *Handler) createConfig(ctx context.Context, req *connect.Request[v03pb.CreateTaskPushNotificationConfigRequest]) (*connect.Response[v03pb.TaskPushNotificationConfig], error) {
	const name = a2a.MethodCreateTaskPushNotificationConfig
	id, err := taskOf(req.Msg.GetParent())
	if err != nil {
		return nil, h.fail(ctx, name, err)
	}
	var c v03.PTaskPushConfig
	if req.Msg.GetConfig() != nil {
		if err := toCodec(req.Msg.GetConfig(), &c); err != nil {
			return nil, h.fail(ctx, name, err)
		}
	}
	cfg, err := v03.PCreatePushToV1(id, &v03.PCreatePushRequest{ConfigID: req.Msg.GetConfigId(), Config: &c})
	if err != nil {
		return nil, h.fail(ctx, name, err)
	}
	return h.config(ctx, req.Header(), name, cfg)
}

func (h *Handler) getConfig(ctx context.Context, req *connect.Request[v03pb.GetTaskPushNotificationConfigRequest]) (*connect.Response[v03pb.TaskPushNotificationConfig], error) {
	id, cfg, err := configOf(req.Msg.GetName())
	if err != nil {
		return nil, h.fail(ctx, a2a.MethodGetTaskPushNotificationConfig, err)
	}
	return h.config(ctx, req.Header(), a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfg})
}

func (h *Handler) listConfigs(ctx context.Context, req *connect.Request[v03pb.ListTaskPushNotificationConfigRequest]) (*connect.Response[v03pb.ListTaskPushNotificationConfigResponse], error) {
	const name = a2a.MethodListTaskPushNotificationConfigs
	id, err := taskOf(req.Msg.GetParent())
	if err != nil {
		return nil, h.fail(ctx, name, err)
	}
	resp, err := h.call(ctx, req.Header(), name, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: id})
	if err != nil {
		return nil, err
	}
	list := v03.PListPushResponse{Configs: []v03.PTaskPushConfig{}}
	for _, c := range resp.(*a2a.ListTaskPushNotificationConfigsResponse).GetConfigs() {
		list.Configs = append(list.Configs, v03.PPushConfigFromV1(c))
	}
	out := &v03pb.ListTaskPushNotificationConfigResponse{}
	if err := fromCodec(list, out); err != nil {
		return nil, h.fail(ctx, name, err)
	}
	return connect.NewResponse(out), nil
}

func (h *Handler) deleteConfig(ctx context.Context, req *connect.Request[v03pb.DeleteTaskPushNotificationConfigRequest]) (*connect.Response[emptypb.Empty], error) {
	id, cfg, err := configOf(req.Msg.GetName())
	if err != nil {
		return nil, h.fail(ctx, a2a.MethodDeleteTaskPushNotificationConfig, err)
	}
	if _, err := h.call(ctx, req.Header(), a2a.MethodDeleteTaskPushNotificationConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: id, Id: cfg}); err != nil {
		return nil, err
	}
	return connect.NewResponse(&emptypb.Empty{}), nil
}

// getAgentCard answers with the extended card when the caller may have it
// and the public card otherwise: v0.3's GetAgentCard is both.
func (h *Handler) getAgentCard(ctx context.Context, req *connect.Request[v03pb.GetAgentCardRequest]) (*connect.Response[v03pb.AgentCard], error) {
	card := h.card
	if resp, err := h.call(ctx, req.Header(), a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}); err == nil {
		card = resp.(*a2a.AgentCard)
	}
	var m map[string]any
	if err := json.Unmarshal(v03.CardJSON(card), &m); err != nil {
		return nil, h.fail(ctx, a2a.MethodGetExtendedAgentCard, a2a.Internal(err))
	}
	delete(m, "security") // v0.3 JSON's shape; the proto's Security differs
	out := &v03pb.AgentCard{}
	if err := fromCodec(m, out); err != nil {
		return nil, h.fail(ctx, a2a.MethodGetExtendedAgentCard, err)
	}
	return connect.NewResponse(out), nil
}
