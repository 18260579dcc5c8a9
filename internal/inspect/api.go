package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/check"
)

// maxRequest bounds a request of the page (files travel in messages).
const maxRequest = 32 << 20

// conn is how the page wants the agent called.
type conn struct {
	URL     string            `json:"url"`
	Binding string            `json:"binding"` // "" lets the card's order decide
	Token   string            `json:"token"`
	Headers map[string]string `json:"headers"`
}

// header returns the extra headers, with the bearer token.
func (c conn) header() http.Header {
	h := http.Header{}
	for k, v := range c.Headers {
		if k = strings.TrimSpace(k); k != "" {
			h.Set(k, strings.TrimSpace(v))
		}
	}
	return h
}

// callRequest is the body of /api/call: an A2A operation by its method
// name, and its request in ProtoJSON.
type callRequest struct {
	conn
	Method  string          `json:"method"`
	Request json.RawMessage `json:"request"`
}

// apiError is an error as the page shows it.
type apiError struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details map[string]string `json:"details,omitempty"`
}

// errorOf describes err for the page: an A2A error by its name, anything
// else as a failure to reach the agent.
func errorOf(err error) *apiError {
	if ae, ok := errors.AsType[*a2a.Error](err); ok {
		return &apiError{Code: ae.Code.Name(), Message: ae.WireMessage(), Details: ae.Metadata}
	}
	return &apiError{Code: "transport", Message: err.Error()}
}

// decode reads the JSON body of r into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": &apiError{Code: "request", Message: "the page sent a bad request: " + err.Error()}})
		return false
	}
	return true
}

// writeJSON writes v as the JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// rawJSON is a proto message in ProtoJSON, for embedding in a response.
func rawJSON(m proto.Message) json.RawMessage {
	b, err := a2a.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"unencodable": err.Error()})
	}
	return b
}

// info tells the page the target it starts with and where the push
// receiver listens.
func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"target": s.o.Target, "pushUrl": s.base + "/push/" + s.pushID,
	})
}

// httpClient returns a client that records its traffic into rec.
func (s *Server) httpClient(rec *recorder) *http.Client {
	h2 := s.o.HTTPTransport.Clone()
	p := new(http.Protocols)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	h2.Protocols = p
	return &http.Client{Transport: &captureTransport{rec: rec, base: s.o.HTTPTransport, h2: h2}}
}

// connect resolves the card and returns a client for the agent; calls go
// out once (no retries), so that the traffic shows what happened.
func (s *Server) connect(ctx context.Context, c conn, rec *recorder) (*client.Client, error) {
	if c.URL == "" {
		return nil, errors.New("no agent URL: type one at the top of the page")
	}
	hc := s.httpClient(rec)
	card, err := client.Resolve(ctx, c.URL, &client.ResolveOptions{HTTPClient: hc, Header: c.header(), Cache: s.cache})
	if err != nil {
		return nil, err
	}
	ts := client.AllTransports()
	if c.Binding != "" {
		var only []client.TransportFactory
		for _, f := range ts {
			if strings.EqualFold(f.Binding, c.Binding) {
				only = append(only, f)
			}
		}
		ts = only
	}
	return client.New(card, &client.Options{HTTPClient: hc, BearerToken: c.Token, Header: c.header(), Transports: ts, Retries: -1})
}

// card fetches the card and runs the card checks of parley check on it.
func (s *Server) card(w http.ResponseWriter, r *http.Request) {
	var c conn
	if !decode(w, r, &c) {
		return
	}
	rec := &recorder{}
	h := c.header()
	if c.Token != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	rep, card, err := check.CheckCard(r.Context(), check.Options{URL: c.URL, Header: h, HTTPClient: s.httpClient(rec)})
	out := map[string]any{"traffic": rec.snapshot()}
	if err != nil {
		out["error"] = errorOf(err)
	} else {
		out["report"] = rep
		if card != nil {
			out["card"] = rawJSON(card)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// call performs one A2A operation and streams its outcome to the page as
// JSON lines: {"result": …} for a unary answer, one {"event": …} per
// stream event, {"error": …}, and last {"traffic": […], "interface": …}.
func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	var cr callRequest
	if !decode(w, r, &cr) {
		return
	}
	m := a2a.MethodByName(cr.Method)
	if m == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": &apiError{Code: "request", Message: fmt.Sprintf("unknown method %q", cr.Method)}})
		return
	}
	req := m.NewRequest()
	if len(cr.Request) > 0 {
		if err := a2a.Unmarshal(cr.Request, req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": &apiError{Code: "request", Message: "the request is not a valid " + cr.Method + " request: " + err.Error()}})
			return
		}
	}
	out := newLines(w)
	rec := &recorder{}
	defer func() { out.send(map[string]any{"traffic": rec.snapshot()}) }()
	c, err := s.connect(r.Context(), cr.conn, rec)
	if err != nil {
		out.send(map[string]any{"error": errorOf(err)})
		return
	}
	defer c.Close()
	out.send(map[string]any{"interface": rawJSON(c.Interface())})
	if !m.Streaming {
		resp, err := c.Invoker().Call(r.Context(), m, req)
		if err != nil {
			out.send(map[string]any{"error": errorOf(err)})
			return
		}
		out.send(map[string]any{"result": rawJSON(resp)})
		return
	}
	for ev, err := range c.Invoker().Stream(r.Context(), m, req) {
		if err != nil {
			out.send(map[string]any{"error": errorOf(err)})
			return
		}
		out.send(map[string]any{"event": rawJSON(ev.Response)})
	}
}

// lines writes JSON lines, each flushed at once.
type lines struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newLines(w http.ResponseWriter) *lines {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return &lines{w: w, rc: http.NewResponseController(w)}
}

func (l *lines) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": &apiError{Code: "internal", Message: err.Error()}})
	}
	_, _ = l.w.Write(append(b, '\n'))
	_ = l.rc.Flush()
}

// check runs parley check against the agent and returns its report, as
// JSON and as the text the command prints.
func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	var c conn
	if !decode(w, r, &c) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.CheckTimeout)
	defer cancel()
	rep, err := check.Run(ctx, check.Options{URL: c.URL, Token: c.Token, Header: c.header()})
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"error": errorOf(err)})
		return
	}
	var text strings.Builder
	_ = rep.WriteText(&text, check.TextOptions{})
	writeJSON(w, http.StatusOK, map[string]any{"report": rep, "text": text.String()})
}
