package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// RESTTransport is the HTTP+JSON binding (brief §11): one route per
// operation, taken from a2a.Methods, below the interface URL. Path
// variables and the tenant (as a leading /{tenant} segment) go into the
// path; the other fields go into a JSON body (POST) or the query string
// (GET and DELETE, brief §11.5). SubscribeToTask is sent as POST (DESIGN
// B1). Bodies are application/a2a+json; error bodies are read by shape,
// whatever their content type. It is safe for concurrent use.
type RESTTransport struct {
	base string // interface URL without a trailing slash
	httpBase
}

var _ Transport = (*RESTTransport)(nil)

// NewRESTTransport returns a transport for the interface URL base.
func NewRESTTransport(base string, cfg TransportConfig) (*RESTTransport, error) {
	if _, err := checkURL(base); err != nil {
		return nil, err
	}
	return &RESTTransport{base: strings.TrimRight(base, "/"), httpBase: newHTTPBase(cfg)}, nil
}

// restRequest is one operation's HTTP request.
type restRequest struct {
	verb string
	url  string
	body []byte // nil: no body
}

// build maps a request message onto the operation's route.
func (t *RESTTransport) build(m *a2a.Method, req proto.Message) (restRequest, error) {
	msg := req.ProtoReflect()
	fields := msg.Descriptor().Fields()
	bound := map[string]bool{"tenant": true}
	var path strings.Builder
	if tf := fields.ByName("tenant"); tf != nil {
		if tenant := msg.Get(tf).String(); tenant != "" {
			path.WriteString("/")
			path.WriteString(url.PathEscape(tenant))
		}
	}
	rest := m.Path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			path.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}') + i
		name := rest[i+1 : j]
		path.WriteString(rest[:i])
		fd := fields.ByJSONName(name)
		v := ""
		if fd != nil {
			v = msg.Get(fd).String()
		}
		if v == "" {
			// The route cannot be built; the other bindings would hear
			// the same complaint from the server.
			return restRequest{}, a2a.InvalidParams(a2a.FieldViolation{Field: name, Description: "required field is missing"})
		}
		path.WriteString(url.PathEscape(v))
		bound[name] = true
		rest = rest[j+1:]
	}
	r := restRequest{verb: m.HTTPMethod, url: t.base + path.String()}
	if m.Name == a2a.MethodSubscribeToTask {
		r.verb = http.MethodPost // DESIGN B1: the prose's verb, served by every SDK
	}
	if r.verb == http.MethodPost {
		body, err := bodyWithout(req, bound)
		if err != nil {
			return restRequest{}, fmt.Errorf("a2a client: encoding the %s request: %w", m.Name, err)
		}
		r.body = body
		return r, nil
	}
	q, err := queryOf(msg, bound)
	if err != nil {
		return restRequest{}, err
	}
	if q != "" {
		r.url += "?" + q
	}
	return r, nil
}

// bodyWithout renders req as JSON without the members carried by the path.
// An empty result is sent as no body at all.
func bodyWithout(req proto.Message, bound map[string]bool) ([]byte, error) {
	b, err := a2a.Marshal(req)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	changed := false
	for name := range bound {
		if _, ok := obj[name]; ok {
			delete(obj, name)
			changed = true
		}
	}
	if len(obj) == 0 {
		return nil, nil
	}
	if !changed {
		return b, nil
	}
	return json.Marshal(obj)
}

// queryOf renders the populated fields of a GET or DELETE request as query
// parameters named by their JSON names (brief §11.5): strings as they are,
// booleans true/false, enums by name, timestamps in RFC 3339.
func queryOf(msg protoreflect.Message, bound map[string]bool) (string, error) {
	q := url.Values{}
	var err error
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := fd.JSONName()
		if bound[name] {
			return true
		}
		if fd.IsList() || fd.IsMap() {
			err = fmt.Errorf("a2a client: field %s cannot travel in a query string", name)
			return false
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			q.Set(name, v.String())
		case protoreflect.BoolKind:
			q.Set(name, strconv.FormatBool(v.Bool()))
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
			protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			q.Set(name, strconv.FormatInt(v.Int(), 10))
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			q.Set(name, strconv.FormatUint(v.Uint(), 10))
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				q.Set(name, string(ev.Name()))
			} else {
				q.Set(name, strconv.Itoa(int(v.Enum())))
			}
		case protoreflect.MessageKind:
			ts, ok := v.Message().Interface().(*timestamppb.Timestamp)
			if !ok {
				err = fmt.Errorf("a2a client: field %s cannot travel in a query string", name)
				return false
			}
			q.Set(name, ts.AsTime().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
		default:
			err = fmt.Errorf("a2a client: field %s cannot travel in a query string", name)
			return false
		}
		return true
	})
	if err != nil {
		return "", err
	}
	return q.Encode(), nil
}

// call performs a unary operation and decodes the body into out (nil to
// ignore it).
func (t *RESTTransport) call(ctx context.Context, name string, req, out proto.Message) error {
	m := a2a.MethodByName(name)
	r, err := t.build(m, req)
	if err != nil {
		return err
	}
	resp, err := t.send(ctx, name, r.verb, r.url, r.body, contentTypeA2A, contentTypeA2A+", "+contentTypeJSON)
	if err != nil {
		return err
	}
	rb, err := readAll(ctx, name, r.url, resp)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return failure(name, r.url, resp, rb)
	}
	if out != nil {
		if err := a2a.Unmarshal(rb, out); err != nil {
			return &TransportError{Op: name, URL: r.url, Phase: PhaseResponse, StatusCode: resp.StatusCode, Err: err}
		}
	}
	return nil
}

// stream performs a streaming operation.
func (t *RESTTransport) stream(ctx context.Context, name string, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		m := a2a.MethodByName(name)
		r, err := t.build(m, req)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		resp, err := t.send(ctx, name, r.verb, r.url, r.body, contentTypeA2A, contentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 || !isEventStream(resp) {
			rb, err := readAll(ctx, name, r.url, resp)
			if err == nil {
				if resp.StatusCode < 200 || resp.StatusCode > 299 {
					err = failure(name, r.url, resp, rb)
				} else {
					err = &TransportError{Op: name, URL: r.url, Phase: PhaseResponse, StatusCode: resp.StatusCode,
						Err: fmt.Errorf("expected %s, got %q", contentTypeSSE, resp.Header.Get("Content-Type"))}
				}
			}
			yield(a2a.StreamEvent{}, err)
			return
		}
		readEvents(ctx, name, r.url, resp, func(ev sseEvent) (*a2a.StreamResponse, error) {
			if ev.name != "error" {
				sr := &a2a.StreamResponse{}
				if err := a2a.Unmarshal(ev.data, sr); err == nil && sr.Payload != nil {
					return sr, nil
				} else if ev.name == "" && !bytes.Contains(ev.data, []byte(`"error"`)) {
					if err == nil {
						err = fmt.Errorf("event without a payload: %s", bodySnippet(ev.data))
					}
					return nil, &TransportError{Op: name, URL: r.url, Phase: PhaseStream, Err: err}
				}
			}
			return nil, streamError(name, r.url, ev.data)
		}, yield)
	}
}

// streamError reads an error sent as the last event of a REST stream: the
// same body as an error response, its HTTP status in error.code.
func streamError(op, u string, data []byte) error {
	status := http.StatusInternalServerError
	if b, ok := parseErrorBody(data); ok {
		if n, err := strconv.Atoi(string(bytes.TrimSpace(b.Code))); err == nil && n >= 400 && n <= 599 {
			status = n
		}
	}
	if e := httpError(status, nil, data); e != nil {
		return e
	}
	return &TransportError{Op: op, URL: u, Phase: PhaseStream, StatusCode: status, Err: bodySnippet(data)}
}

// SendMessage implements a2a.Service.
func (t *RESTTransport) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	out := &a2a.SendMessageResponse{}
	if err := t.call(ctx, a2a.MethodSendMessage, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// SendStreamingMessage implements a2a.Service.
func (t *RESTTransport) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return t.stream(ctx, a2a.MethodSendStreamingMessage, req)
}

// GetTask implements a2a.Service.
func (t *RESTTransport) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	out := &a2a.Task{}
	if err := t.call(ctx, a2a.MethodGetTask, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListTasks implements a2a.Service.
func (t *RESTTransport) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	out := &a2a.ListTasksResponse{}
	if err := t.call(ctx, a2a.MethodListTasks, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelTask implements a2a.Service.
func (t *RESTTransport) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	out := &a2a.Task{}
	if err := t.call(ctx, a2a.MethodCancelTask, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// SubscribeToTask implements a2a.Service.
func (t *RESTTransport) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.StreamEvent, error] {
	return t.stream(ctx, a2a.MethodSubscribeToTask, req)
}

// CreateTaskPushNotificationConfig implements a2a.Service.
func (t *RESTTransport) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	out := &a2a.TaskPushNotificationConfig{}
	if err := t.call(ctx, a2a.MethodCreateTaskPushNotificationConfig, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetTaskPushNotificationConfig implements a2a.Service.
func (t *RESTTransport) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	out := &a2a.TaskPushNotificationConfig{}
	if err := t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListTaskPushNotificationConfigs implements a2a.Service.
func (t *RESTTransport) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	out := &a2a.ListTaskPushNotificationConfigsResponse{}
	if err := t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTaskPushNotificationConfig implements a2a.Service.
func (t *RESTTransport) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	return t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, req, nil)
}

// GetExtendedAgentCard implements a2a.Service.
func (t *RESTTransport) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	out := &a2a.AgentCard{}
	if err := t.call(ctx, a2a.MethodGetExtendedAgentCard, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close implements Transport.
func (t *RESTTransport) Close() error {
	t.hc.CloseIdleConnections()
	return nil
}
