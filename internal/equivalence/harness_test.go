package equivalence_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// The three bindings, by the names the agent card uses.
const (
	jsonRPC = a2a.BindingJSONRPC
	restB   = a2a.BindingHTTPJSON
	grpcB   = a2a.BindingGRPC
)

var bindings = []string{jsonRPC, restB, grpcB}

// config adjusts a test server.
type config struct {
	agent   server.Agent
	tokens  map[string]string
	maxBody int64
	// failID makes the store fail (an internal error) on reads of this
	// task id.
	failID string
	mutate func(card *a2a.AgentCard, o *server.Options)
}

// env is one Parley server serving the three bindings on one loopback
// port, as `parley serve` does: HTTP/1.1 and cleartext HTTP/2.
type env struct {
	t    testing.TB
	base string
	card *a2a.AgentCard
	srv  *server.Server
	hc   *http.Client // HTTP/1.1, for the JSON bindings
	h2c  *http.Client // cleartext HTTP/2, for gRPC
	grpc a2aconnect.A2AServiceClient
}

// failingStore fails reads of one task id, to produce internal errors.
type failingStore struct {
	taskstore.Store
	id string
}

func (s failingStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	if id == s.id {
		return nil, errors.New("the disk is on fire")
	}
	return s.Store.GetTask(ctx, sc, id)
}

// start runs a server for cfg, logging nowhere, and makes the clients
// that speak to it.
func start(t testing.TB, cfg config) *env {
	t.Helper()
	var store taskstore.Store
	if cfg.failID != "" {
		store = failingStore{memstore.New(), cfg.failID}
	}
	s := testkit.StartServer(t, &testkit.Options{
		Agent:  cfg.agent,
		Store:  store,
		Tokens: cfg.tokens,
		Quiet:  true,
		Mutate: cfg.mutate,
		HTTP:   func(o *a2ahttp.Options) { o.MaxBody = cfg.maxBody },
	})
	h2c := testkit.H2CClient()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() {
		h2c.CloseIdleConnections()
		hc.CloseIdleConnections()
	})
	return &env{t: t, base: s.URL, card: s.Card, srv: s.Core, hc: hc, h2c: h2c,
		grpc: a2aconnect.NewA2AServiceClient(h2c, s.URL, connect.WithGRPC())}
}

// callOpts are the service parameters and credentials of a call.
type callOpts struct {
	version    *string // nil means "1.0"; "" sends none
	token      string
	extensions string
}

func (o callOpts) header() http.Header {
	h := http.Header{}
	v := "1.0"
	if o.version != nil {
		v = *o.version
	}
	if v != "" {
		h.Set("A2A-Version", v)
	}
	if o.token != "" {
		h.Set("Authorization", "Bearer "+o.token)
	}
	if o.extensions != "" {
		h.Set("A2A-Extensions", o.extensions)
	}
	return h
}

// outcome is the result of one call in a form common to the bindings.
type outcome struct {
	// value is a unary call's response message.
	value proto.Message
	// events are a stream's events, in order.
	events []*a2a.StreamResponse
	// err is the error that failed the call or ended the stream.
	err *wireErr
	// extensions is the A2A-Extensions response header (gRPC: metadata).
	extensions string
	// challenge is the WWW-Authenticate response header.
	challenge string
}

// wireErr is an error as the client saw it.
type wireErr struct {
	code    a2a.Code
	message string
	reason  string
	domain  string
	meta    map[string]string
	fields  []string // google.rpc.BadRequest field violations
}

func (w *wireErr) String() string {
	return fmt.Sprintf("%s %q reason=%q meta=%v fields=%v", w.code.Name(), w.message, w.reason, w.meta, w.fields)
}

// responseType returns an empty response message of an operation, from the
// service descriptor.
func responseType(method string) proto.Message {
	md := a2a.File_a2a_proto.Services().Get(0).Methods().ByName(protoreflect.Name(method))
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		panic(err)
	}
	return mt.New().Interface()
}
