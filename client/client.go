package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// Options configure a Client. The zero value of every field means its
// default; a nil *Options means all defaults.
type Options struct {
	// HTTPClient performs every HTTP request (default http.DefaultClient).
	// Put TLS settings, proxies and timeouts here. The gRPC transport uses
	// a copy of its *http.Transport restricted to HTTP/2, and dials a
	// host:port interface over TLS when that transport has a TLS
	// configuration (see NewGRPCTransport). The calls carry the client's
	// credentials, so no redirect is followed (the call fails with a
	// *RedirectError naming the target) unless this client's
	// CheckRedirect decides otherwise.
	HTTPClient *http.Client
	// BearerToken, when set, is sent on every call as
	// "Authorization: Bearer <token>".
	BearerToken string
	// BearerTokenFunc, when set, gives the bearer token instead of
	// BearerToken: it is called for every request the client sends (each
	// call, retry, resumed stream and WaitForCompletion poll), with that
	// call's context, so a session that outlives an access token sends its
	// successor (an OAuth token source that refreshes, say:
	// func(context.Context) (string, error) { t, err := ts.Token(); ... }).
	// It must be safe for concurrent use and should return a cached token
	// while it is valid. When it fails the request is not sent and the
	// call fails with an error wrapping its error, neither retried nor
	// moved to another interface (RFC 6750 §2.1; spec §7.1).
	BearerTokenFunc func(ctx context.Context) (string, error)
	// Header holds extra headers for every call (an API key, say). The
	// client's own headers (A2A-Version, A2A-Extensions, and Authorization
	// when BearerToken or BearerTokenFunc is set) take precedence.
	Header http.Header
	// Extensions are the extension URIs to activate on every call, sent in
	// the A2A-Extensions header (spec §3.2.6).
	Extensions []string
	// Transports are the bindings the client may use (default
	// AllTransports(): JSONRPC(), REST() and GRPC(), then the v0.3
	// JSON-RPC and HTTP+JSON ones). v1.x interfaces are tried first, each
	// group in the card's order.
	Transports []TransportFactory
	// Retries is how many times a call is repeated after a failure that
	// may pass (default 2; negative: never). Only failures that make a
	// repeat safe are retried: a failed connection (the request never
	// left) for every operation; no response, a 502, 503 or 504, gRPC
	// UNAVAILABLE, or UnavailableError (a server whose store failed for a
	// while, or that is shutting down: spec §3.3.2's system errors), for
	// SendMessage and SendStreamingMessage (resent with the same
	// messageId, and for streams only before any event arrived), the
	// reads, SubscribeToTask before its first event, and CancelTask and
	// DeleteTaskPushNotificationConfig, which the spec makes idempotent
	// (spec §3.3.1, §3.1.10). Other errors the server sent are never
	// retried.
	Retries int
	// RetryDelay is the base of the exponential backoff between retries
	// (default 200 ms); each wait is randomized (jitter). A server that
	// asks for a longer wait (Retry-After, a gRPC RetryInfo, the
	// retryAfter of an UnavailableError) gets it, up to MaxRetryAfter;
	// when the call's context would end before the wait does, the call
	// ends at once with the server's error.
	RetryDelay time.Duration
	// Resumes is how many times in a row the client tries to resume a
	// task stream that broke after its first event (default 5; negative:
	// never). A stream of SendStreamingMessage or SubscribeToTask that
	// breaks (the connection drops, or the server cuts off a reader too
	// slow for it) before its task is terminal or interrupted goes on as
	// a SubscribeToTask after the last event received (Last-Event-ID on
	// the HTTP bindings, last-event-id metadata on gRPC): the caller's
	// iterator continues with no gap and no duplicate. Attempts are
	// spaced by RetryDelay's backoff, the first made at once, and counted
	// afresh whenever a resumed stream delivers an event. A stream is
	// resumable only when its events are numbered (StreamEvent.Seq), as
	// Parley's are on every binding.
	Resumes int
	// OnResume, when set, is called before each attempt to resume a
	// broken stream with the task, the number of the last event received
	// and the failure that broke the stream (for logs; it must not block).
	OnResume func(taskID string, after uint64, cause error)
	// PollInterval is WaitForCompletion's first wait between GetTask calls
	// when it cannot stream (default 500 ms); it doubles up to 5 s.
	PollInterval time.Duration
	// Middleware wraps every call the client makes, the first outermost,
	// before retries and interface fallback: it sees each call once (see
	// a2a.Middleware).
	Middleware []a2a.Middleware
}

// Default option values.
const (
	DefaultRetries      = 2
	DefaultResumes      = 5
	DefaultRetryDelay   = 200 * time.Millisecond
	DefaultPollInterval = 500 * time.Millisecond
	maxPollInterval     = 5 * time.Second
	maxRetryDelay       = 5 * time.Second
	// MaxRetryAfter caps the wait a server may ask for before a retry.
	MaxRetryAfter = 30 * time.Second
)

// Client calls one A2A agent. It implements a2a.Service (and, through
// Invoker, a2a.Invoker), so it can stand wherever the server core does (a
// proxy, a test double, middleware).
//
// A Client picks the agent card's interfaces in the card's order among the
// bindings it supports, and moves on to the next interface when a
// connection to the current one cannot be made (connection refused, DNS
// or TLS handshake failure; never on an error the server sent); once it
// moved, it stays on the new interface. Every request message carries the
// tenant of the interface it is sent to (spec §8.3.2), every call sends
// A2A-Version: 1.0.
//
// Errors the server sent are *a2a.Error values, so errors.Is(err,
// a2a.ErrTaskNotFound) works on every binding; failures to reach the server
// are *TransportError values. The Client never modifies the requests it
// is given. It is safe for concurrent use.
//
// Retries (Options.Retries) follow Method.RetrySafe: SendMessage and
// SendStreamingMessage get a messageId before the first attempt when the
// message has none, and every retry resends that same id, so a server that
// honours messageId idempotency (Parley does) runs the agent once; a
// stream is retried only when it failed before any event arrived;
// CreateTaskPushNotificationConfig is retried only when the connection
// failed. A task stream that breaks after its first event is resumed from
// the last event received (Options.Resumes): the caller sees one
// uninterrupted iterator. A stream that ends before a terminal or
// interrupted state (or, for SendStreamingMessage, before a direct
// message) and cannot be resumed ends with a *StreamEndedError
// (errors.Is(err, ErrStreamEnded)): call GetTask, and subscribe again if
// the task is not finished (WaitForCompletion does this). GetExtendedAgentCard's result is returned, not cached: a caller
// that wants it to replace the public card (spec §13.3) makes a new Client
// from it.
type Client struct {
	a2a.Service // the eleven operations, over inv
	inv         a2a.Invoker
	card        *a2a.AgentCard
	cands       []candidate
	cur         atomic.Int32
	retries     int
	resumes     int
	onResume    func(taskID string, after uint64, cause error)
	delay       time.Duration
	poll        time.Duration
	notes       notes // what WaitForCompletion needs to know about follow-ups
}

// candidate is one usable interface of the card and its transport.
type candidate struct {
	iface *a2a.AgentInterface
	t     Transport
}

var _ a2a.Service = (*Client)(nil)

// countOption reads a count among the Options: 0 asks for def, a negative
// count for none.
func countOption(n, def int) int {
	if n == 0 {
		return def
	}
	return max(n, 0)
}

// New returns a Client for the agent card. It fails when the card has no
// interface the client can use: a binding among Options.Transports at
// protocol version 1.x.
func New(card *a2a.AgentCard, opts *Options) (*Client, error) {
	if card == nil {
		return nil, errors.New("a2a client: no agent card")
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if len(o.Transports) == 0 {
		o.Transports = AllTransports()
	}
	o.Retries = countOption(o.Retries, DefaultRetries)
	o.Resumes = countOption(o.Resumes, DefaultResumes)
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	cfg := TransportConfig{HTTPClient: o.HTTPClient, Header: http.Header{}}
	for k, v := range o.Header {
		cfg.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	cfg.Header.Set("A2A-Version", a2a.ProtocolVersion)
	if len(o.Extensions) > 0 {
		cfg.Header.Set("A2A-Extensions", strings.Join(o.Extensions, ", "))
	}
	switch {
	case o.BearerTokenFunc != nil:
		cfg.Token = o.BearerTokenFunc // set per request (transport.Headers.Apply)
	case o.BearerToken != "":
		cfg.Header.Set("Authorization", "Bearer "+o.BearerToken)
	}

	c := &Client{card: proto.Clone(card).(*a2a.AgentCard), retries: o.Retries, resumes: o.Resumes,
		onResume: o.OnResume, delay: o.RetryDelay, poll: o.PollInterval}
	c.inv = a2a.Chain(invoker{c}, o.Middleware...)
	c.Service = a2a.NewService(c.inv)
	var skipped []string
	// v1.x interfaces first, in the card's order, then the others (v0.3)
	// the transports speak: a v1.0 interface is always preferred.
	for _, in := range byVersion(c.card.GetSupportedInterfaces()) {
		f := factoryFor(o.Transports, in.GetProtocolBinding(), in.GetProtocolVersion())
		if f == nil {
			skipped = append(skipped, fmt.Sprintf("%s at %s: binding %s at protocol version %q not supported",
				in.GetProtocolBinding(), in.GetUrl(), in.GetProtocolBinding(), in.GetProtocolVersion()))
			continue
		}
		t, err := f.New(in, cfg)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s at %s: %v", in.GetProtocolBinding(), in.GetUrl(), err))
			continue
		}
		c.cands = append(c.cands, candidate{iface: in, t: withPreview(c.card, in, t)})
	}
	if len(c.cands) == 0 {
		if len(skipped) == 0 {
			return nil, errors.New("a2a client: the agent card declares no interfaces (supportedInterfaces is empty)")
		}
		return nil, fmt.Errorf("a2a client: no usable interface in the agent card: %s", strings.Join(skipped, "; "))
	}
	return c, nil
}

func factoryFor(fs []TransportFactory, binding, version string) *TransportFactory {
	for i := range fs {
		if strings.EqualFold(fs[i].Binding, binding) && factoryVersionOK(fs[i].Version, version) {
			return &fs[i]
		}
	}
	return nil
}

// factoryVersionOK reports whether a factory for version fv ("" for 1.x)
// speaks an interface at protocol version v.
func factoryVersionOK(fv, v string) bool {
	if fv == "" {
		return versionOK(v)
	}
	mm := strings.TrimSpace(v)
	if parts := strings.Split(mm, "."); len(parts) >= 2 {
		mm = parts[0] + "." + parts[1]
	}
	return mm == fv
}

// byVersion orders interfaces: those at this client's major version (or
// none stated) first, then the rest, each group in the card's order.
func byVersion(ins []*a2a.AgentInterface) []*a2a.AgentInterface {
	out := make([]*a2a.AgentInterface, 0, len(ins))
	for _, in := range ins {
		if versionOK(in.GetProtocolVersion()) {
			out = append(out, in)
		}
	}
	for _, in := range ins {
		if !versionOK(in.GetProtocolVersion()) {
			out = append(out, in)
		}
	}
	return out
}

// versionOK accepts 1.x interfaces, and an interface that does not say.
func versionOK(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	major, _, _ := strings.Cut(v, ".")
	want, _, _ := strings.Cut(a2a.ProtocolVersion, ".")
	return major == want
}

// Invoker returns the client as an a2a.Invoker (its middleware included),
// for code that works with the method table, such as a proxy.
func (c *Client) Invoker() a2a.Invoker { return c.inv }

// Card returns the agent card the client was made from. The caller must
// not modify it.
func (c *Client) Card() *a2a.AgentCard { return c.card }

// Interface returns the interface calls currently go to.
func (c *Client) Interface() *a2a.AgentInterface { return c.cands[c.cur.Load()].iface }

// Close closes the idle connections of the transports' HTTP client
// (Options.HTTPClient, which may be shared). Calls in progress are not
// affected.
func (c *Client) Close() error {
	var errs []error
	for _, cd := range c.cands {
		errs = append(errs, cd.t.Close())
	}
	return errors.Join(errs...)
}

// ---------------------------------------------------------------------------
// Fallback and retries

// connectFailed reports whether err says the interface could not be
// reached at all.
func connectFailed(err error) bool {
	var te *TransportError
	return errors.As(err, &te) && te.Phase == PhaseConnect
}

// retryable reports whether a call that failed with err may be repeated;
// safe says whether the operation tolerates being received twice. An
// UnavailableError is the server saying that nothing was done and that a
// retry may succeed (its store failed for a while, it is shutting down,
// it has no room for the request now).
func retryable(err error, safe bool) bool {
	var te *TransportError
	if errors.As(err, &te) {
		return te.Phase == PhaseConnect || (safe && te.Temporary())
	}
	var ae *a2a.Error
	return safe && errors.As(err, &ae) && ae.Code == a2a.CodeUnavailable
}

// retryAfter is the wait the failure err asked for before a retry: an
// UnavailableError's (a2a.Error.RetryAfter), or the Retry-After or
// RetryInfo of a transport condition; 0 for none. It is capped at
// MaxRetryAfter.
func retryAfter(err error) time.Duration {
	var d time.Duration
	var te *TransportError
	var ae *a2a.Error
	switch {
	case errors.As(err, &te):
		d = te.RetryAfter
	case errors.As(err, &ae) && ae.Code == a2a.CodeUnavailable:
		d, _ = ae.RetryAfter()
	}
	return min(max(d, 0), MaxRetryAfter)
}

// wait sleeps before retry number attempt+1: exponential backoff from
// c.delay, capped, randomized in its upper half; or longer when the
// failure cause asked for a longer wait (retryAfter). When ctx would end
// before the wait does, it returns cause at once.
func (c *Client) wait(ctx context.Context, attempt int, cause error) error {
	d := c.delay << attempt
	if d > maxRetryDelay || d <= 0 {
		d = maxRetryDelay
	}
	d = max(jitter(d), retryAfter(cause))
	if dl, ok := ctx.Deadline(); ok && cause != nil && time.Until(dl) < d {
		return cause
	}
	return sleep(ctx, d)
}

// onCandidates runs call on the current interface and, while connections
// fail, on the next ones in the card's order. req gets each interface's
// tenant before the call.
func (c *Client) onCandidates(req proto.Message, call func(Transport) error) error {
	start := int(c.cur.Load())
	var err error
	for k := range c.cands {
		i := (start + k) % len(c.cands)
		setTenant(req, c.cands[i].iface.GetTenant())
		err = call(c.cands[i].t)
		if !connectFailed(err) {
			if k > 0 {
				c.cur.CompareAndSwap(int32(start), int32(i))
			}
			return err
		}
	}
	return err
}

// unary runs a unary call with interface fallback and retries.
func (c *Client) unary(ctx context.Context, req proto.Message, safe bool, call func(Transport) error) error {
	for attempt := 0; ; attempt++ {
		err := c.onCandidates(req, call)
		if err == nil || attempt >= c.retries || !retryable(err, safe) || ctx.Err() != nil {
			return err
		}
		if werr := c.wait(ctx, attempt, err); werr != nil {
			return werr
		}
	}
}

// setTenant sets the request's tenant field to the interface's tenant, or
// clears it when the interface has none (spec §8.3.2).
func setTenant(req proto.Message, tenant string) {
	m := req.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("tenant")
	if fd == nil {
		return
	}
	if tenant == "" {
		m.Clear(fd)
		return
	}
	m.Set(fd, protoreflect.ValueOfString(tenant))
}

// invoker performs calls for a Client: a copy of each request, with a
// messageId when it sends a message, through retries and fallback.
type invoker struct{ c *Client }

// own returns a copy of req the client may modify, or a new empty request
// when req is nil. A message without a messageId gets one.
func own(m *a2a.Method, req proto.Message) proto.Message {
	if req == nil || !req.ProtoReflect().IsValid() {
		req = m.NewRequest()
	} else {
		req = proto.Clone(req)
	}
	if r, ok := req.(*a2a.SendMessageRequest); ok {
		if msg := r.GetMessage(); msg != nil && msg.MessageId == "" {
			msg.MessageId = a2a.NewID()
		}
	}
	return req
}

// Call implements a2a.Invoker. The task in the answer is noted (see
// notes), and the reply to a follow-up is remembered, for WaitForCompletion.
func (v invoker) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	r := own(m, req)
	msgID, taskID := followUpOf(r)
	var before *timestamppb.Timestamp
	if taskID != "" {
		before = v.c.notes.seenAt(taskID)
	}
	var out proto.Message
	err := v.c.unary(ctx, r, m.RetrySafe, func(t Transport) (err error) {
		out, err = t.Call(ctx, m, r)
		return err
	})
	if err != nil {
		return out, err
	}
	switch o := out.(type) {
	case *a2a.Task:
		v.c.notes.observe(o.GetId(), o.GetStatus())
	case *a2a.SendMessageResponse:
		switch t := o.GetTask(); {
		case t != nil && taskID != "":
			v.c.notes.sent(msgID, t, before)
		case t != nil:
			v.c.notes.observe(t.GetId(), t.GetStatus())
		}
	}
	return out, err
}

// followUpOf returns the messageId and task id of a send that continues an
// existing task ("", "" for any other request).
func followUpOf(req proto.Message) (msgID, taskID string) {
	if r, ok := req.(*a2a.SendMessageRequest); ok && r.GetMessage().GetTaskId() != "" {
		return r.GetMessage().GetMessageId(), r.GetMessage().GetTaskId()
	}
	return "", ""
}

// Stream implements a2a.Invoker.
func (v invoker) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	r := own(m, req)
	var tr streamTracker
	switch r := r.(type) {
	case *a2a.SendMessageRequest:
		tr = streamTracker{send: true, taskID: r.GetMessage().GetTaskId(), followUp: r.GetMessage().GetTaskId() != ""}
	case *a2a.SubscribeToTaskRequest:
		tr = streamTracker{taskID: r.GetId()}
	}
	seq := v.c.stream(ctx, m, r, tr)
	msgID, taskID := followUpOf(r)
	return func(yield func(a2a.StreamEvent, error) bool) {
		var before *timestamppb.Timestamp
		if taskID != "" {
			before = v.c.notes.seenAt(taskID)
		}
		for ev, err := range seq {
			if err == nil {
				v.c.noteEvent(ev, msgID, taskID, before)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// noteEvent records what a stream event says about its task: the first
// event of a follow-up stream is the task as the follow-up found it, and
// any status update after it is the agent's answer.
func (c *Client) noteEvent(ev a2a.StreamEvent, msgID, taskID string, before *timestamppb.Timestamp) {
	switch r := ev.Response; {
	case r.GetTask() != nil && taskID != "":
		c.notes.sent(msgID, r.GetTask(), before)
	case r.GetTask() != nil:
		c.notes.observe(r.GetTask().GetId(), r.GetTask().GetStatus())
	case r.GetStatusUpdate() != nil:
		su := r.GetStatusUpdate()
		if taskID != "" {
			c.notes.progressed(taskID, msgID)
		}
		c.notes.observe(su.GetTaskId(), su.GetStatus())
	}
}
