package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// This file is the checker's own wire layer. It does not use package
// client: a grader must see exactly what a server sends (status, headers,
// error body shapes, SSE framing) and must not be fooled by a client's
// tolerance, retries or fallback.

// target is one interface of the agent card: a binding at a URL.
type target struct {
	binding string // a2a.BindingJSONRPC or a2a.BindingHTTPJSON
	url     string // as the card gives it (REST: without trailing slash)
	tenant  string
	hc      *http.Client
	header  http.Header // sent on every request (extra headers)
	token   string      // default bearer token ("" = anonymous)
	rpcID   atomic.Int64
}

// callOpts vary one request.
type callOpts struct {
	token       *string // bearer token for this call (nil: the default; "": anonymous)
	version     *string // A2A-Version value (nil: "1.0"; "": no header)
	verb        string  // REST verb override
	query       string  // extra raw query appended to the URL
	contentType string  // request Content-Type override
	rawBody     []byte  // JSON-RPC: send this body instead of an envelope
	noTenant    bool
}

func strp(s string) *string { return &s }

// exchange is one HTTP request and what came back.
type exchange struct {
	Method    string
	URL       string
	ReqHeader http.Header
	ReqBody   []byte

	Status  int
	Header  http.Header
	Body    []byte   // unary responses
	Events  []*event // streams
	Closed  bool     // the server ended the stream (EOF; gRPC: the status arrived)
	Err     error    // transport failure (no usable response)
	Elapsed time.Duration

	// gRPC calls.
	IsGRPC    bool
	Streaming bool
	Proto     int         // HTTP major version of the response
	Trailer   http.Header // HTTP trailers
	GRPC      *grpcStatus // the status the call ended with, nil if none arrived
}

// contentType is the response media type without parameters.
func (x *exchange) contentType() string {
	if x == nil || x.Header == nil {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(x.Header.Get("Content-Type"))
	return mt
}

// event is one Server-Sent Event of a stream.
type event struct {
	ID    string
	HasID bool
	Name  string
	Data  []byte
	At    time.Duration

	Resp      *a2a.StreamResponse // decoded payload
	Err       *wireError          // an error carried by the event
	RPCID     string              // JSON-RPC: the id of the envelope
	DecodeErr error               // the data could not be decoded
}

// kind names the payload of an event, for reports.
func (e *event) kind() string {
	switch {
	case e.Err != nil:
		return "error(" + e.Err.name() + ")"
	case e.DecodeErr != nil:
		return "undecodable"
	case e.Resp.GetTask() != nil:
		return "task(" + stateName(e.Resp.GetTask().GetStatus().GetState()) + ")"
	case e.Resp.GetStatusUpdate() != nil:
		return "status(" + stateName(e.Resp.GetStatusUpdate().GetStatus().GetState()) + ")"
	case e.Resp.GetArtifactUpdate() != nil:
		return "artifact(" + abridge(a2a.JoinText(e.Resp.GetArtifactUpdate().GetArtifact().GetParts()), 24) + ")"
	case e.Resp.GetMessage() != nil:
		return "message(" + abridge(a2a.JoinText(e.Resp.GetMessage().GetParts()), 24) + ")"
	}
	return "empty"
}

// state returns the task state an event reports, if any.
func (e *event) state() a2a.TaskState {
	if t := e.Resp.GetTask(); t != nil {
		return t.GetStatus().GetState()
	}
	return e.Resp.GetStatusUpdate().GetStatus().GetState()
}

// wireError is a protocol error as the server sent it.
type wireError struct {
	Code        a2a.Code // identified code (Known)
	Known       bool
	JSONRPCCode int
	HTTPStatus  int
	Status      string // google.rpc status name (REST, gRPC)
	GRPCCode    int    // gRPC status code (gRPC)
	Message     string
	Reason      string
	Domain      string
	Metadata    map[string]string
	HasInfo     bool   // an ErrorInfo detail is present
	DetailsOK   bool   // details/data is absent or an array of objects with @type
	HasDetails  bool   // details/data is present
	Shape       string // "jsonrpc", "google.rpc.Status", "problem", "other"
}

func (e *wireError) name() string {
	if e == nil {
		return "none"
	}
	if e.Known {
		return e.Code.Name()
	}
	if e.JSONRPCCode != 0 {
		return fmt.Sprintf("code %d", e.JSONRPCCode)
	}
	if e.Shape == "grpc" {
		return "gRPC " + e.Status
	}
	return fmt.Sprintf("HTTP %d", e.HTTPStatus)
}

// is reports whether the error was identified as c.
func (e *wireError) is(c a2a.Code) bool { return e != nil && e.Known && e.Code == c }

// result is the outcome of one call.
type result struct {
	ex     *exchange
	raw    json.RawMessage // the success result (unary; gRPC: the message rendered as JSON)
	bin    []byte          // gRPC: the success message as received
	err    *wireError      // a protocol error
	idOK   bool            // JSON-RPC: the response id echoes the request id
	rpcID  string          // JSON-RPC: the request id
	broken string          // the response is neither a result nor an error (why)
}

// failed reports a transport failure or an unreadable response: the check
// could not be completed, which is not the server's protocol answer.
func (r *result) failed() bool { return r.ex.Err != nil }

// ok reports a success response.
func (r *result) ok() bool { return r.ex.Err == nil && r.err == nil && r.broken == "" }

// decode unmarshals the success result into m.
func (r *result) decode(m proto.Message) error {
	if r.bin != nil {
		return proto.Unmarshal(r.bin, m)
	}
	if r.raw == nil {
		return errors.New("no result")
	}
	return a2a.Unmarshal(r.raw, m)
}

// errName describes the outcome for a report.
func (r *result) outcome() string {
	switch {
	case r.ex.Err != nil:
		return "transport failure"
	case r.err != nil:
		return r.err.name()
	case r.broken != "":
		return "unreadable response"
	}
	return "success"
}

// ---------------------------------------------------------------------------
// Requests

// newRequest builds the HTTP request of an operation.
func (t *target) newRequest(ctx context.Context, method string, req proto.Message, o callOpts, stream bool) (*http.Request, []byte, string, error) {
	var (
		verb, u, ct string
		body        []byte
		rpcID       string
	)
	if req != nil && t.tenant != "" && !o.noTenant {
		req = proto.Clone(req)
		setTenant(req, t.tenant)
	}
	switch t.binding {
	case a2a.BindingJSONRPC:
		verb, u, ct = http.MethodPost, t.url, "application/json"
		if o.rawBody != nil {
			body = o.rawBody
			break
		}
		id := t.rpcID.Add(1)
		rpcID = strconv.FormatInt(id, 10)
		b := []byte(`{"jsonrpc":"2.0","id":` + rpcID + `,"method":` + strconv.Quote(method))
		if req != nil {
			pb, err := a2a.Marshal(req)
			if err != nil {
				return nil, nil, "", err
			}
			b = append(append(b, `,"params":`...), pb...)
		}
		body = append(b, '}')
	default:
		m := a2a.MethodByName(method)
		if m == nil {
			return nil, nil, "", fmt.Errorf("unknown operation %s", method)
		}
		var err error
		verb, u, body, err = restRoute(t.url, m, req, o.verb)
		if err != nil {
			return nil, nil, "", err
		}
		ct = "application/a2a+json"
	}
	if o.query != "" {
		if strings.Contains(u, "?") {
			u += "&" + o.query
		} else {
			u += "?" + o.query
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, verb, u, rd)
	if err != nil {
		return nil, nil, "", err
	}
	for k, v := range t.header {
		hr.Header[k] = append([]string(nil), v...)
	}
	if body != nil {
		if o.contentType != "" {
			ct = o.contentType
		}
		hr.Header.Set("Content-Type", ct)
	}
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else if t.binding == a2a.BindingJSONRPC {
		hr.Header.Set("Accept", "application/json")
	} else {
		hr.Header.Set("Accept", "application/a2a+json, application/json")
	}
	switch {
	case o.version == nil:
		hr.Header.Set("A2A-Version", a2a.ProtocolVersion)
	case *o.version != "":
		hr.Header.Set("A2A-Version", *o.version)
	}
	tok := t.token
	if o.token != nil {
		tok = *o.token
	}
	if tok != "" {
		hr.Header.Set("Authorization", "Bearer "+tok)
	}
	return hr, body, rpcID, nil
}

// restRoute maps a request onto the operation's HTTP+JSON route: path
// variables from the request's members, a leading /{tenant}, the other
// members in the query (GET, DELETE) or the JSON body (POST).
func restRoute(base string, m *a2a.Method, req proto.Message, verbOverride string) (verb, u string, body []byte, err error) {
	obj := map[string]json.RawMessage{}
	if req != nil {
		b, err := a2a.Marshal(req)
		if err != nil {
			return "", "", nil, err
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return "", "", nil, err
		}
	}
	var path strings.Builder
	if tn := jsonStr(obj["tenant"]); tn != "" {
		path.WriteString("/" + url.PathEscape(tn))
	}
	delete(obj, "tenant")
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
		path.WriteString(url.PathEscape(jsonStr(obj[name])))
		delete(obj, name)
		rest = rest[j+1:]
	}
	u = strings.TrimRight(base, "/") + path.String()
	verb = m.HTTPMethod
	if m.Name == a2a.MethodSubscribeToTask {
		verb = http.MethodPost
	}
	if verbOverride != "" {
		verb = verbOverride
	}
	if verb == http.MethodPost {
		if len(obj) == 0 {
			return verb, u, []byte("{}"), nil
		}
		body, err = json.Marshal(obj)
		return verb, u, body, err
	}
	q := url.Values{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := bytes.TrimSpace(obj[k])
		switch {
		case len(v) == 0, string(v) == `""`, string(v) == "[]", string(v) == "{}":
			continue
		case v[0] == '"':
			q.Set(k, jsonStr(v))
		default:
			q.Set(k, string(v))
		}
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return verb, u, nil, nil
}

func jsonStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// setTenant sets the request's tenant field, when it has one.
func setTenant(req proto.Message, tenant string) {
	m := req.ProtoReflect()
	if fd := m.Descriptor().Fields().ByName("tenant"); fd != nil {
		m.Set(fd, protoValueOfString(tenant))
	}
}

// ---------------------------------------------------------------------------
// Unary calls

const maxBody = 8 << 20

// callTimeout bounds one unary request.
const callTimeout = 20 * time.Second

// call performs a unary operation.
func (t *target) call(ctx context.Context, method string, req proto.Message, o callOpts) *result {
	if t.binding == a2a.BindingGRPC {
		return t.grpcCall(ctx, method, req, o)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	hr, body, rpcID, err := t.newRequest(ctx, method, req, o, false)
	if err != nil {
		return &result{ex: &exchange{Method: "?", Err: fmt.Errorf("checker: building the request: %w", err)}}
	}
	ex := &exchange{Method: hr.Method, URL: hr.URL.String(), ReqHeader: hr.Header.Clone(), ReqBody: body}
	start := time.Now()
	resp, err := t.hc.Do(hr)
	if err != nil {
		ex.Err, ex.Elapsed = err, time.Since(start)
		return &result{ex: ex, rpcID: rpcID}
	}
	defer resp.Body.Close()
	ex.Status, ex.Header = resp.StatusCode, resp.Header
	ex.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	ex.Elapsed = time.Since(start)
	if err != nil {
		ex.Err = fmt.Errorf("reading the response: %w", err)
		return &result{ex: ex, rpcID: rpcID}
	}
	return t.parse(ex, rpcID)
}

// parse interprets a unary response.
func (t *target) parse(ex *exchange, rpcID string) *result {
	r := &result{ex: ex, rpcID: rpcID}
	if t.binding == a2a.BindingJSONRPC {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(ex.Body, &env); err != nil || (env.Result == nil && env.Error == nil) {
			if e := httpLevelError(ex); e != nil {
				r.err = e
				return r
			}
			r.broken = "not a JSON-RPC response"
			return r
		}
		r.idOK = rpcID == "" || string(bytes.TrimSpace(env.ID)) == rpcID
		if env.Error != nil && string(env.Error) != "null" {
			r.err = parseRPCError(env.Error, ex)
			return r
		}
		r.raw = env.Result
		return r
	}
	if ex.Status >= 200 && ex.Status < 300 {
		r.raw = ex.Body
		if len(bytes.TrimSpace(r.raw)) == 0 {
			r.raw = json.RawMessage("{}")
		}
		return r
	}
	r.err = parseRESTError(ex)
	return r
}

// httpLevelError interprets an HTTP status without a protocol body (a 401
// before any method, say).
func httpLevelError(ex *exchange) *wireError {
	if ex.Status == http.StatusUnauthorized || ex.Status == http.StatusForbidden {
		return &wireError{Code: a2a.CodeUnauthenticated, Known: true, HTTPStatus: ex.Status, Shape: "other", DetailsOK: true}
	}
	return nil
}

// parseRPCError reads a JSON-RPC error object.
func parseRPCError(raw json.RawMessage, ex *exchange) *wireError {
	var o struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	e := &wireError{Shape: "jsonrpc", HTTPStatus: ex.Status}
	if json.Unmarshal(raw, &o) != nil {
		e.Shape = "other"
		return e
	}
	e.JSONRPCCode, e.Message = o.Code, o.Message
	readDetails(e, o.Data)
	if c, ok := a2a.CodeForJSONRPC(o.Code); ok {
		e.Code, e.Known = c, true
	}
	if ex.Status == http.StatusUnauthorized || ex.Status == http.StatusForbidden {
		e.Code, e.Known = a2a.CodeUnauthenticated, true
	}
	return e
}

// parseRESTError reads an HTTP+JSON error response.
func parseRESTError(ex *exchange) *wireError {
	e := &wireError{HTTPStatus: ex.Status, Shape: "other"}
	var top map[string]json.RawMessage
	if json.Unmarshal(ex.Body, &top) == nil {
		if inner, ok := top["error"]; ok {
			var s struct {
				Code    int             `json:"code"`
				Status  string          `json:"status"`
				Message string          `json:"message"`
				Details json.RawMessage `json:"details"`
			}
			if json.Unmarshal(inner, &s) == nil {
				e.Shape = "google.rpc.Status"
				e.Status, e.Message = s.Status, s.Message
				readDetails(e, s.Details)
			}
		} else if _, ok := top["title"]; ok {
			e.Shape = "problem"
		} else if _, ok := top["type"]; ok {
			e.Shape = "problem"
		}
	}
	switch {
	case e.Reason != "":
		if c, ok := a2a.CodeForReason(e.Reason); ok {
			e.Code, e.Known = c, true
		}
	}
	if !e.Known {
		switch ex.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			e.Code, e.Known = a2a.CodeUnauthenticated, true
		case http.StatusNotFound:
			if e.Status == "NOT_FOUND" {
				e.Code, e.Known = a2a.CodeTaskNotFound, true
			}
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			if e.Status == "INVALID_ARGUMENT" || e.Shape != "google.rpc.Status" {
				e.Code, e.Known = a2a.CodeInvalidParams, true
			}
		}
	}
	return e
}

// readDetails reads error details (JSON-RPC data, rpc.Status details).
func readDetails(e *wireError, raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	e.DetailsOK = true
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	e.HasDetails = true
	var list []map[string]json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		e.DetailsOK = false
		var one map[string]json.RawMessage
		if json.Unmarshal(raw, &one) == nil {
			list = append(list, one) // a v0.3-style object: read it anyway
		}
	}
	for _, d := range list {
		typ := jsonStr(d["@type"])
		if typ == "" {
			e.DetailsOK = false
		}
		if strings.HasSuffix(typ, "google.rpc.ErrorInfo") {
			e.HasInfo = true
			e.Reason, e.Domain = jsonStr(d["reason"]), jsonStr(d["domain"])
			var md map[string]any
			if json.Unmarshal(d["metadata"], &md) == nil {
				e.Metadata = map[string]string{}
				for k, v := range md {
					e.Metadata[k] = fmt.Sprint(v)
				}
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Streams

// streamCtl says how long to read a stream.
type streamCtl struct {
	// settle reports whether the stream has reached the point after which
	// it must close (nil: read until the server closes or max elapses).
	settle func(evs []*event) bool
	// after is how long to wait for the server to close the stream once
	// settle said so.
	after time.Duration
	// stop reports whether to stop reading (and close) at once.
	stop func(evs []*event) bool
	// max bounds the whole read.
	max time.Duration
}

// stream performs a streaming operation and reads its events as ctl says.
// The connection is closed when it returns.
func (t *target) stream(ctx context.Context, method string, req proto.Message, o callOpts, ctl streamCtl) *result {
	if t.binding == a2a.BindingGRPC {
		return t.grpcStream(ctx, method, req, o, ctl)
	}
	if ctl.max == 0 {
		ctl.max = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hr, body, rpcID, err := t.newRequest(ctx, method, req, o, true)
	if err != nil {
		return &result{ex: &exchange{Method: "?", Err: fmt.Errorf("checker: building the request: %w", err)}}
	}
	ex := &exchange{Method: hr.Method, URL: hr.URL.String(), ReqHeader: hr.Header.Clone(), ReqBody: body}
	start := time.Now()
	resp, err := t.hc.Do(hr)
	if err != nil {
		ex.Err, ex.Elapsed = err, time.Since(start)
		return &result{ex: ex, rpcID: rpcID}
	}
	defer resp.Body.Close()
	ex.Status, ex.Header = resp.StatusCode, resp.Header
	r := &result{ex: ex, rpcID: rpcID, idOK: true}
	if ex.contentType() != "text/event-stream" {
		ex.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		ex.Elapsed = time.Since(start)
		pr := t.parse(ex, rpcID)
		if pr.ok() {
			pr.broken = "a streaming operation answered " + ex.contentType() + " instead of text/event-stream"
		}
		return pr
	}
	rd := newSSE(resp.Body)
	take := func(ev *event) bool {
		t.decodeEvent(ev, rpcID, r)
		return true
	}
	return t.readEvents(ctx, ex, r, start, rd.next, take, ctl)
}

// readEvents reads a stream's events from next (io.EOF: the server ended
// the stream) until ctl says to stop, the server ends it, or ctx is done.
// take finishes an event and says whether it belongs in ex.Events. The
// caller closes the stream (cancels ctx) when it returns.
func (t *target) readEvents(ctx context.Context, ex *exchange, r *result, start time.Time, next func() (*event, error),
	take func(*event) bool, ctl streamCtl) *result {
	type item struct {
		ev  *event
		err error
	}
	ch := make(chan item)
	go func() {
		for {
			ev, err := next()
			select {
			case ch <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	deadline := time.NewTimer(ctl.max)
	defer deadline.Stop()
	var settled <-chan time.Time
	for {
		select {
		case it := <-ch:
			if it.err != nil {
				if it.err == io.EOF {
					ex.Closed = true
				} else if ctx.Err() == nil {
					ex.Err = fmt.Errorf("stream broken: %w", it.err)
				}
				ex.Elapsed = time.Since(start)
				return r
			}
			it.ev.At = time.Since(start)
			if !take(it.ev) {
				continue
			}
			ex.Events = append(ex.Events, it.ev)
			if ctl.stop != nil && ctl.stop(ex.Events) {
				ex.Elapsed = time.Since(start)
				return r
			}
			if settled == nil && ctl.settle != nil && ctl.settle(ex.Events) {
				settled = time.After(ctl.after)
			}
		case <-settled:
			ex.Elapsed = time.Since(start)
			return r
		case <-deadline.C:
			ex.Elapsed = time.Since(start)
			return r
		case <-ctx.Done():
			ex.Elapsed = time.Since(start)
			if ex.Err == nil {
				ex.Err = ctx.Err()
			}
			return r
		}
	}
}

// decodeEvent decodes one event's data.
func (t *target) decodeEvent(ev *event, rpcID string, r *result) {
	data := ev.Data
	if t.binding == a2a.BindingJSONRPC {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			ev.DecodeErr = err
			return
		}
		ev.RPCID = string(bytes.TrimSpace(env.ID))
		if rpcID != "" && ev.RPCID != rpcID {
			r.idOK = false
		}
		if env.Error != nil && string(env.Error) != "null" {
			ev.Err = parseRPCError(env.Error, &exchange{Status: 200, Header: http.Header{}})
			return
		}
		data = env.Result
	} else {
		var probe map[string]json.RawMessage
		if json.Unmarshal(data, &probe) == nil {
			if inner, ok := probe["error"]; ok {
				ex := &exchange{Header: http.Header{}, Body: data}
				var s struct {
					Code int `json:"code"`
				}
				_ = json.Unmarshal(inner, &s)
				ex.Status = s.Code
				ev.Err = parseRESTError(ex)
				return
			}
		}
	}
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(data, sr); err != nil {
		ev.DecodeErr = err
		return
	}
	ev.Resp = sr
}

// sseReader reads Server-Sent Events.
type sseReader struct {
	sc *bufio.Scanner
}

func newSSE(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxBody)
	return &sseReader{sc: sc}
}

// next returns the next event, or io.EOF at the end of the stream.
func (s *sseReader) next() (*event, error) {
	ev := &event{}
	var data [][]byte
	has := false
	for s.sc.Scan() {
		line := strings.TrimSuffix(s.sc.Text(), "\r")
		if line == "" {
			if !has {
				ev = &event{}
				continue
			}
			ev.Data = bytes.Join(data, []byte("\n"))
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		name, val, _ := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		switch name {
		case "data":
			data = append(data, []byte(val))
			has = true
		case "id":
			ev.ID, ev.HasID = val, true
		case "event":
			ev.Name = val
		}
	}
	if err := s.sc.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

// rawPost sends a JSON-RPC body as it is (envelope checks).
func (t *target) rawPost(ctx context.Context, body []byte, o callOpts) *result {
	o.rawBody = body
	return t.call(ctx, "", nil, o)
}
