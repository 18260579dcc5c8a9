package v03grpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/v03/v03grpc"
)

// TestReflectionListsV03: with the v0.3 service named in
// grpcbind.Options.ExtraServices, reflection on the shared port lists both
// A2A services and resolves the v0.3 one's descriptors (registered by
// v03pb), so grpcurl can describe and call either.
func TestReflectionListsV03(t *testing.T) {
	t.Parallel()
	svc := a2a.NewService(a2a.InvokerFuncs{})
	v1 := grpcbind.NewHandler(svc, &grpcbind.Options{ExtraServices: []string{v03grpc.ServiceName}})
	v03 := v03grpc.NewHandler(svc, nil)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v03grpc.IsProcedure(r.URL.Path) {
			v03.ServeHTTP(w, r)
			return
		}
		v1.ServeHTTP(w, r)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := grpcreflect.NewClient(testkit.H2CClient(), srv.URL, connect.WithGRPC()).NewStream(ctx)
	defer st.Close()
	names, err := st.ListServices()
	if err != nil {
		t.Fatalf("ListServices: %v", err)
	}
	for _, want := range []protoreflect.FullName{a2aconnect.A2AServiceName, v03grpc.ServiceName, grpcbind.HealthService, grpcbind.ReflectionService} {
		if !slices.Contains(names, want) {
			t.Errorf("ListServices = %v, missing %s", names, want)
		}
	}
	for _, svc := range []protoreflect.FullName{a2aconnect.A2AServiceName, v03grpc.ServiceName, v03grpc.ServiceName + ".SendMessage", "a2a.v1.Task"} {
		files, err := st.FileContainingSymbol(svc)
		if err != nil || len(files) == 0 {
			t.Errorf("FileContainingSymbol(%s) = %d files, %v", svc, len(files), err)
		}
	}
}
