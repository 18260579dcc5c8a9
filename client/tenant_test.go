package client_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// TestTenant: the interface's tenant travels in every request (REST: the
// /{tenant}/ route; JSON-RPC: params.tenant) and scopes the tasks.
func TestTenant(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			e := start(t, config{wrap: rec.wrap, ifaces: func(base string) []*a2a.AgentInterface {
				return []*a2a.AgentInterface{
					{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0", Tenant: "acme"},
					{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0", Tenant: "acme"},
					{Url: hostOf(base), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: "acme"},
				}
			}})
			ctx := testCtx(t)
			c := e.client(b, nil)
			// The caller's own tenant is replaced by the interface's.
			task, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Tenant: "other", Message: a2a.UserMessage("hello")})
			if err != nil {
				t.Fatal(err)
			}
			id := task.GetTask().GetId()
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); err != nil {
				t.Fatalf("GetTask in the tenant = %v", err)
			}
			for _, r := range rec.all() {
				if b.name == a2a.BindingGRPC {
					var m struct{ Tenant string }
					switch r.path {
					case "/lf.a2a.v1.A2AService/SendMessage":
						sm := &a2a.SendMessageRequest{}
						grpcMessage(r.body, sm)
						m.Tenant = sm.Tenant
					case "/lf.a2a.v1.A2AService/GetTask":
						gt := &a2a.GetTaskRequest{}
						grpcMessage(r.body, gt)
						m.Tenant = gt.Tenant
					}
					if m.Tenant != "acme" {
						t.Errorf("gRPC %s message tenant %q, want acme", r.path, m.Tenant)
					}
				} else if b.name == a2a.BindingHTTPJSON {
					if !strings.HasPrefix(r.path, "/acme/") || strings.Contains(string(r.body), "tenant") {
						t.Errorf("REST request %s %s body %s, want the /acme/ route and no body tenant", r.method, r.path, r.body)
					}
				} else if !strings.Contains(string(r.body), `"tenant":"acme"`) {
					t.Errorf("JSON-RPC body %s, want tenant acme", r.body)
				}
			}

			// Without the tenant the task does not exist.
			plain := proto.Clone(e.card).(*a2a.AgentCard)
			for _, in := range plain.SupportedInterfaces {
				in.Tenant = ""
			}
			c2, err := client.New(plain, &client.Options{Transports: []client.TransportFactory{b.factory}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c2.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTask outside the tenant = %v, want TaskNotFound", err)
			}
			for cl, want := range map[*client.Client]int32{c: 1, c2: 0} {
				l, err := cl.ListTasks(ctx, nil)
				if err != nil || l.TotalSize != want {
					t.Errorf("ListTasks (tenant %q) = %v, %v; want %d tasks", cl.Interface().GetTenant(), l, err, want)
				}
			}
		})
	}
}

// TestTenantAcrossBindings: a tenant is one scope whichever binding carries
// it, including a tenant that needs escaping in a URL path.
func TestTenantAcrossBindings(t *testing.T) {
	t.Parallel()
	for _, tenant := range []string{"acme", "acme corp/eu"} {
		t.Run(tenant, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{ifaces: func(base string) []*a2a.AgentInterface {
				return []*a2a.AgentInterface{
					{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0", Tenant: tenant},
					{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0", Tenant: tenant},
					{Url: hostOf(base), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: tenant},
				}
			}})
			ctx := testCtx(t)
			rest, rpc, grpc := e.client(bindings[1], nil), e.client(bindings[0], nil), e.client(bindings[2], nil)
			task := send(t, rest, "hello", nil)
			if _, err := rest.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
				t.Fatalf("REST GetTask = %v", err)
			}
			_, err := rpc.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
			if err != nil {
				t.Fatalf("JSON-RPC GetTask of a task made over REST in tenant %q = %v", tenant, err)
			}
			if _, err := grpc.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
				t.Fatalf("gRPC GetTask of a task made over REST in tenant %q = %v", tenant, err)
			}
			l, err := grpc.ListTasks(ctx, nil)
			if err != nil || len(l.Tasks) != 1 || l.Tasks[0].Id != task.Id {
				t.Fatalf("gRPC ListTasks in tenant %q = %v, %v; want the one task", tenant, l, err)
			}
		})
	}
}
