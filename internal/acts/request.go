package acts

import (
	"context"
	"encoding/json"
	"maps"
	"strings"

	"parley.dev/parley/a2a"
)

// perform sends a step's request once. It returns the outcome, the
// assertion root (§4.2: the A2A object; a stream's events) and the notes
// on where the runner departed from the draft.
func (b *bindingRun) perform(ctx context.Context, sc *scope, st *Step) (*Outcome, any, []string, error) {
	version := b.doc.SpecVersion
	if st.Raw != nil {
		return b.performRaw(ctx, sc, st)
	}
	p, err := sc.expand(norm(st.Params))
	if err != nil {
		return nil, nil, nil, err
	}
	params, _ := p.(map[string]any)
	method, req, notes := request(st.Operation, params, b.d.Binding())
	opts := CallOptions{Version: version}
	switch {
	case method == "":
		o := b.d.Card(ctx)
		return o, o.Body, notes, nil
	case a2a.MethodByName(method).Streaming:
		o := b.d.Stream(ctx, method, req, opts, streamControl(st.ExpectStream))
		return o, streamRoot(o), notes, nil
	}
	o := b.d.Call(ctx, method, req, opts)
	return o, o.Body, notes, nil
}

// performRaw sends a raw step's request (ACTS §4.4).
func (b *bindingRun) performRaw(ctx context.Context, sc *scope, st *Step) (*Outcome, any, []string, error) {
	var notes []string
	r := RawRequest{Method: st.Raw.Method, Headers: map[string]string{}, Anonymous: b.anonymousRaw}
	pv, err := sc.expandString(st.Raw.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	r.Path = scalarText(pv)
	for k, v := range st.Raw.Headers {
		hv, err := sc.expandString(v)
		if err != nil {
			return nil, nil, nil, err
		}
		r.Headers[k] = scalarText(hv)
	}
	var body []byte
	switch {
	case st.Raw.BodyRaw != nil:
		bv, err := sc.expandString(*st.Raw.BodyRaw)
		if err != nil {
			return nil, nil, nil, err
		}
		body = []byte(scalarText(bv))
	case st.Raw.Body != nil:
		bv, err := sc.expand(norm(st.Raw.Body))
		if err != nil {
			return nil, nil, nil, err
		}
		if note := rawMessageID(bv); note != "" {
			notes = append(notes, note)
		}
		if body, err = json.Marshal(bv); err != nil {
			return nil, nil, nil, err
		}
	}
	var ctl *StreamControl
	if st.ExpectStream != nil {
		c := streamControl(st.ExpectStream)
		ctl = &c
	}
	o := b.d.Raw(ctx, r, body, ctl)
	if o.Events != nil {
		return o, streamRoot(o), notes, nil
	}
	return o, o.Body, notes, nil
}

// rawMessageID gives the message of a raw request body (JSON-RPC:
// params.message; HTTP+JSON: message) a messageId when it has none, as
// ACTS §12.4 requires of every request the runner sends, and says so.
func rawMessageID(body any) string {
	top, _ := body.(map[string]any)
	if top == nil {
		return ""
	}
	m, _ := top["message"].(map[string]any)
	where := "message"
	if p, ok := top["params"].(map[string]any); ok {
		m, _ = p["message"].(map[string]any)
		where = "params.message"
	}
	if m == nil {
		return ""
	}
	if _, has := m["messageId"]; has {
		return ""
	}
	m["messageId"] = newUUID()
	return "the raw body's " + where + " had no messageId: the runner gave it one (ACTS §12.4; messageId is REQUIRED, spec §4.1.4)"
}

// streamRoot is a stream's assertion root: its events' views.
func streamRoot(o *Outcome) []any {
	var evs []any
	for _, e := range o.Events {
		if e.Body != nil {
			evs = append(evs, eventView(e.Body))
		}
	}
	return evs
}

// request maps an abstract operation and its parameters (ACTS §4.3) onto
// a method of the table and its request in the JSON model.
func request(op string, params map[string]any, binding string) (string, map[string]any, []string) {
	method := operations[op]
	req := maps.Clone(params)
	if req == nil {
		req = map[string]any{}
	}
	var notes []string
	switch method {
	case "":
		if truth(req["extended"]) {
			// The draft's suite asks for the extended card this way.
			method = a2a.MethodGetExtendedAgentCard
			req = map[string]any{}
		}
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		if m, ok := req["message"].(map[string]any); ok {
			m = maps.Clone(m)
			if _, has := m["messageId"]; !has {
				m["messageId"] = newUUID() // §4.3: the runner generates it
			}
			// The draft's suite puts a follow-up's taskId and contextId
			// beside the message; SendMessageRequest has no such members,
			// the message carries them (spec §3.1.1, §4.1.4).
			for _, k := range []string{"taskId", "contextId"} {
				if v, ok := req[k]; ok {
					delete(req, k)
					if _, has := m[k]; !has {
						m[k] = v
						notes = append(notes, "params."+k+" sent as message."+k+": SendMessageRequest has no "+k+" (spec §3.1.1, §4.1.4)")
					}
				}
			}
			req["message"] = m
		}
	case a2a.MethodCreateTaskPushNotificationConfig:
		// The draft nests the configuration (pushNotificationConfig); the
		// specification's request is the flat TaskPushNotificationConfig
		// (spec §3.1.7).
		if cfg, ok := req["pushNotificationConfig"].(map[string]any); ok {
			delete(req, "pushNotificationConfig")
			for k, v := range cfg {
				if _, set := req[k]; !set {
					req[k] = v
				}
			}
		}
	}
	if binding == REST && strings.Contains(method, "PushNotificationConfig") {
		notes = append(notes, draftRESTPushNote)
	}
	return method, req, notes
}
