package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/acts"
)

// The ACTS drivers: package internal/acts runs ACTS files, and speaks to
// the agent through the checker's own wire layer, which sees exactly what
// the server sends (the raw JSON-RPC result or HTTP+JSON body, the error
// as it travelled), and identifies errors through a2a's one error table.

// RunACTS runs an ACTS document against the agent at opts.URL on every
// interface Run would check, and returns one report per binding. The
// runner-provided variables (ACTS §8) are vars, completed with what the
// options allow: webhookUrl, a receiver on opts.WebhookAddr (the
// webhook_endpoint requirement); otherUserTaskId, a task created by the
// second principal (opts.Token2). opts.Progress is not used.
func RunACTS(ctx context.Context, opts Options, doc *acts.Document, vars map[string]string) ([]*acts.Report, error) {
	ds, card, err := ACTSDrivers(ctx, opts)
	if err != nil {
		return nil, err
	}
	all := map[string]string{}
	for k, v := range vars {
		all[k] = v
	}
	if opts.WebhookAddr != "" && all["webhookUrl"] == "" {
		wh, err := startWebhook(opts.WebhookAddr)
		if err != nil {
			return nil, fmt.Errorf("check: --webhook-addr %s: %w", opts.WebhookAddr, err)
		}
		defer wh.close()
		all["webhookUrl"] = "http://" + wh.ln.Addr().String() + "/acts"
	}
	if opts.Token2 != "" && all["otherUserTaskId"] == "" {
		d := ds[0].(*actsDriver)
		other := opts.Token2
		pm, _, _ := actsRequest(a2a.MethodSendMessage, map[string]any{"message": map[string]any{
			"messageId": "acts-other-" + nonce(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}}})
		res := d.t.call(ctx, a2a.MethodSendMessage, pm, callOpts{token: &other})
		if id, ok := lookupTaskID(res); ok {
			all["otherUserTaskId"] = id
		}
	}
	sdk := acts.SDKInfo{Name: card.GetName(), Version: card.GetVersion(), Language: "unknown"}
	return acts.Run(ctx, doc, acts.Options{Drivers: ds, SDK: sdk, Vars: all, Credentials: opts.Token != ""}), nil
}

// lookupTaskID returns the id of the task a SendMessage created.
func lookupTaskID(res *result) (string, bool) {
	if !res.ok() {
		return "", false
	}
	var resp a2a.SendMessageResponse
	if res.decode(&resp) != nil || resp.GetTask().GetId() == "" {
		return "", false
	}
	return resp.GetTask().GetId(), true
}

// ACTSDrivers resolves the agent card at opts.URL and returns one ACTS
// driver per interface Run would check (opts.Bindings selects them), with
// the card.
func ACTSDrivers(ctx context.Context, opts Options) ([]acts.Driver, *a2a.AgentCard, error) {
	if opts.URL == "" {
		return nil, nil, fmt.Errorf("check: no URL")
	}
	cardURL, err := client.CardURL(opts.URL)
	if err != nil {
		return nil, nil, err
	}
	s := newSession(opts, cardURL)
	res := s.fetchCard(ctx, nil)
	if res.ex.Err != nil {
		return nil, nil, &UnreachableError{Err: fmt.Errorf("GET %s: %w", cardURL, res.ex.Err)}
	}
	card := &a2a.AgentCard{}
	if res.ex.Status != http.StatusOK {
		return nil, nil, fmt.Errorf("check: GET %s: HTTP %d", cardURL, res.ex.Status)
	}
	if err := a2a.Unmarshal(res.ex.Body, card); err != nil {
		return nil, nil, fmt.Errorf("check: the card at %s does not decode: %w", cardURL, err)
	}
	s.card = card
	var ds []acts.Driver
	for _, t := range s.targets(card) {
		ds = append(ds, &actsDriver{s: s, t: t})
	}
	if len(ds) == 0 {
		return nil, card, fmt.Errorf("check: the card lists no interface to run ACTS on")
	}
	return ds, card, nil
}

// actsDriver is the acts.Driver of one target.
type actsDriver struct {
	s *session
	t *target
}

// Binding implements acts.Driver.
func (d *actsDriver) Binding() string {
	switch d.t.binding {
	case a2a.BindingJSONRPC:
		return acts.JSONRPC
	case a2a.BindingGRPC:
		return acts.GRPC
	}
	return acts.REST
}

// Card implements acts.Driver.
func (d *actsDriver) Card(ctx context.Context) *acts.Outcome {
	res := d.s.fetchCard(ctx, nil)
	o := &acts.Outcome{Status: res.ex.Status, Header: res.ex.Header}
	switch {
	case res.ex.Err != nil:
		o.Failure = res.ex.Err.Error()
	case res.ex.Status != http.StatusOK:
		o.Err = actsError(parseRESTError(res.ex), d.t.binding)
	default:
		o.Body, o.Failure = actsJSON(res.ex.Body)
	}
	return o
}

// request reads a request in the JSON model into the method's message.
func actsRequest(method string, req map[string]any) (proto.Message, []byte, error) {
	m := a2a.MethodByName(method)
	if m == nil {
		return nil, nil, fmt.Errorf("unknown operation %s", method)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	pm := m.NewRequest()
	return pm, raw, a2a.Unmarshal(raw, pm)
}

// callOpts returns the options of an ACTS call: its JSON as written
// travels on the JSON bindings; gRPC needs the message, so a request the
// message cannot hold is no gRPC call.
func (d *actsDriver) callOpts(method string, req map[string]any, o acts.CallOptions) (proto.Message, callOpts, string) {
	pm, raw, err := actsRequest(method, req)
	co := callOpts{params: raw}
	if o.Version != "" {
		co.version = &o.Version
	}
	if err != nil {
		if d.t.binding == a2a.BindingGRPC {
			return nil, co, "runner: the request cannot be encoded for gRPC: " + err.Error()
		}
		pm = a2a.MethodByName(method).NewRequest()
		_ = a2a.Unmarshal([]byte(`{"id":`+jsonString(req["id"])+`,"taskId":`+jsonString(req["taskId"])+`}`), pm)
	}
	return pm, co, ""
}

func jsonString(v any) string {
	s, _ := v.(string)
	return strconv.Quote(s)
}

// Call implements acts.Driver.
func (d *actsDriver) Call(ctx context.Context, method string, req map[string]any, o acts.CallOptions) *acts.Outcome {
	pm, co, why := d.callOpts(method, req, o)
	if why != "" {
		return &acts.Outcome{Failure: why}
	}
	return d.outcome(d.t.call(ctx, method, pm, co))
}

// Stream implements acts.Driver.
func (d *actsDriver) Stream(ctx context.Context, method string, req map[string]any, o acts.CallOptions, ctl acts.StreamControl) *acts.Outcome {
	pm, co, why := d.callOpts(method, req, o)
	if why != "" {
		return &acts.Outcome{Failure: why}
	}
	wrap := func(f func([]acts.Event) bool) func([]*event) bool {
		if f == nil {
			return nil
		}
		return func(evs []*event) bool { return f(d.events(evs)) }
	}
	res := d.t.stream(ctx, method, pm, co, streamCtl{settle: wrap(ctl.Settle), after: time.Second, stop: wrap(ctl.Stop), max: ctl.Max})
	res.firstEventError()
	out := d.outcome(res)
	if out.Err == nil && res.broken == "" {
		// The events read are graded even when the stream broke after
		// them; the break itself is the failure.
		out.Events, out.Closed = d.events(res.ex.Events), res.ex.Closed
		out.Failure = ""
		if res.ex.Err != nil && !errors.Is(res.ex.Err, context.DeadlineExceeded) && !errors.Is(res.ex.Err, context.Canceled) {
			out.Failure = res.ex.Err.Error()
		}
	}
	return out
}

// events renders a stream's events in the JSON model: the result as
// received on JSON-RPC and HTTP+JSON, the decoded message on gRPC.
func (d *actsDriver) events(evs []*event) []acts.Event {
	out := make([]acts.Event, 0, len(evs))
	for _, ev := range evs {
		var e acts.Event
		switch {
		case ev.Err != nil:
			e.Err = actsError(ev.Err, d.t.binding)
		case ev.DecodeErr != nil:
			e.Failure = "undecodable event: " + ev.DecodeErr.Error()
		default:
			raw := ev.Data
			if d.t.binding == a2a.BindingJSONRPC {
				var env struct {
					Result json.RawMessage `json:"result"`
				}
				_ = json.Unmarshal(ev.Data, &env)
				raw = env.Result
			} else if d.t.binding == a2a.BindingGRPC {
				raw, _ = a2a.Marshal(ev.Resp)
			}
			v, why := actsJSON(raw)
			e.Body, _ = v.(map[string]any)
			if e.Body == nil {
				e.Failure = "the event is not an object " + why
			}
		}
		out = append(out, e)
	}
	return out
}

// outcome renders a result of the checker's wire layer.
func (d *actsDriver) outcome(r *result) *acts.Outcome {
	o := &acts.Outcome{Status: r.ex.Status, Header: r.ex.Header}
	switch {
	case r.ex.Err != nil:
		o.Failure = r.ex.Err.Error()
	case r.err != nil:
		o.Err = actsError(r.err, d.t.binding)
	case r.broken != "":
		o.Failure = r.broken
	case r.raw != nil:
		o.Body, o.Failure = actsJSON(r.raw)
	}
	return o
}

// actsJSON decodes a JSON value, or says why not.
func actsJSON(b []byte) (any, string) {
	var v any
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, ""
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, "not JSON: " + err.Error()
	}
	return v, ""
}

// actsError renders an error as received.
func actsError(e *wireError, binding string) *acts.WireError {
	w := &acts.WireError{Code: e.Code, Known: e.Known, Message: e.Message}
	switch {
	case binding == a2a.BindingJSONRPC && e.JSONRPCCode != 0:
		w.Wire = strconv.Itoa(e.JSONRPCCode)
	case binding == a2a.BindingGRPC && e.Status != "":
		w.Wire = e.Status
	default:
		w.Wire = fmt.Sprintf("HTTP %d", e.HTTPStatus)
		if e.Status != "" {
			w.Wire += " " + e.Status
		}
	}
	if e.HasInfo {
		md := map[string]any{}
		for k, v := range e.Metadata {
			md[k] = v
		}
		w.Details = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.Reason, "domain": e.Domain, "metadata": md}}
	}
	return w
}

// Raw implements acts.Driver: the request goes as the step wrote it, with
// the run's extra headers, and its bearer token unless the step sends an
// Authorization header or r.Anonymous.
func (d *actsDriver) Raw(ctx context.Context, r acts.RawRequest, body []byte, ctl *acts.StreamControl) *acts.Outcome {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	u := d.t.url
	if p := strings.TrimSpace(r.Path); p != "" && p != "/" {
		u = strings.TrimRight(u, "/") + "/" + strings.TrimLeft(p, "/")
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, strings.ToUpper(r.Method), u, rd)
	if err != nil {
		return &acts.Outcome{Failure: "runner: " + err.Error()}
	}
	for k, v := range d.t.header {
		hr.Header[k] = append([]string(nil), v...)
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	anon := r.Anonymous || hr.Header.Get("Authorization") != ""
	if !anon && d.t.token != "" {
		hr.Header.Set("Authorization", "Bearer "+d.t.token)
	}
	co := callOpts{}
	if anon {
		none := ""
		co.token = &none
	}
	resp, err := d.t.client(co).Do(hr)
	if err != nil {
		return &acts.Outcome{Failure: err.Error()}
	}
	defer resp.Body.Close()
	ex := &exchange{Method: hr.Method, URL: u, Status: resp.StatusCode, Header: resp.Header}
	o := &acts.Outcome{Status: resp.StatusCode, Header: resp.Header}
	if ex.contentType() == "text/event-stream" {
		return rawEvents(ctx, ex, resp, start, ctl, o)
	}
	ex.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		o.Failure = "reading the response: " + err.Error()
		return o
	}
	if v, why := actsJSON(ex.Body); why == "" {
		o.Body = v
	} else {
		o.Body = string(ex.Body)
	}
	switch top, _ := o.Body.(map[string]any); {
	case d.t.binding == a2a.BindingJSONRPC && top["error"] != nil:
		raw, _ := json.Marshal(top["error"])
		o.Err = actsError(parseRPCError(raw, ex), d.t.binding)
	case d.t.binding != a2a.BindingJSONRPC && resp.StatusCode >= 400:
		o.Err = actsError(parseRESTError(ex), d.t.binding)
	}
	return o
}

// rawEvents reads a raw step's Server-Sent Events, each event's data as
// it came (a JSON-RPC envelope stays one).
func rawEvents(ctx context.Context, ex *exchange, resp *http.Response, start time.Time, ctl *acts.StreamControl, o *acts.Outcome) *acts.Outcome {
	conv := func(evs []*event) []acts.Event {
		out := make([]acts.Event, len(evs))
		for i, ev := range evs {
			v, why := actsJSON(ev.Data)
			out[i].Body, _ = v.(map[string]any)
			if out[i].Body == nil {
				out[i].Failure = "the event's data is not a JSON object " + why
			}
		}
		return out
	}
	sc := streamCtl{after: time.Second}
	if ctl != nil {
		sc.max = ctl.Max
		if ctl.Settle != nil {
			sc.settle = func(evs []*event) bool { return ctl.Settle(conv(evs)) }
		}
		if ctl.Stop != nil {
			sc.stop = func(evs []*event) bool { return ctl.Stop(conv(evs)) }
		}
	}
	readEvents(ctx, ex, &result{ex: ex}, start, sseEvents(resp.Body), func(*event) bool { return true }, sc)
	o.Events, o.Closed = conv(ex.Events), ex.Closed
	if o.Events == nil {
		o.Events = []acts.Event{}
	}
	if ex.Err != nil && ctx.Err() == nil {
		o.Failure = ex.Err.Error()
	}
	return o
}

// Parse implements acts.Driver: the payload is served, by an HTTP client
// that answers every request with it, to Parley's own client transport
// of the binding (the card: to client.Resolve), and the object it reads
// is returned. A JSON-RPC envelope's result is what the other bindings
// carry; gRPC receives it as the binary message.
func (d *actsDriver) Parse(method string, payload []byte) (any, error) {
	return parseWithClient(d.t.binding, method, payload)
}
