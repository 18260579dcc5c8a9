package cli_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
)

// grpcClient dials a host:port target over cleartext HTTP/2.
func grpcClient(target string) (a2aconnect.A2AServiceClient, *http.Client) {
	hc := testkit.H2CClient()
	return a2aconnect.NewA2AServiceClient(hc, "http://"+target, connect.WithGRPC()), hc
}

// grpcInterface returns the url of the card's GRPC interface.
func grpcInterface(t *testing.T, p *proc) string {
	t.Helper()
	card := p.getJSON(t, "/.well-known/agent-card.json")
	ifaces, _ := card["supportedInterfaces"].([]any)
	for _, in := range ifaces {
		if field(in, "protocolBinding") == "GRPC" {
			s, _ := field(in, "url").(string)
			return s
		}
	}
	t.Fatalf("the card lists no GRPC interface: %v", card)
	return ""
}

func sendOverGRPC(t *testing.T, target string) {
	t.Helper()
	c, _ := grpcClient(target)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := connect.NewRequest(&a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}})
	req.Header().Set("A2A-Version", "1.0")
	res, err := c.SendMessage(ctx, req)
	if err != nil || res.Msg.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage over gRPC at %s: %v %v", target, res, err)
	}
}

func listServices(t *testing.T, target string) ([]protoreflect.FullName, error) {
	t.Helper()
	_, hc := grpcClient(target)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := grpcreflect.NewClient(hc, "http://"+target, connect.WithGRPC()).NewStream(ctx)
	defer s.Close()
	return s.ListServices()
}

func TestServeGRPCOnTheSamePort(t *testing.T) {
	p := serve(t, "--store", "memory", "--agent", "conformance")
	if target := grpcInterface(t, p); target != p.addr {
		t.Fatalf("GRPC interface url %q, want the dial target %q", target, p.addr)
	}
	if !strings.Contains(p.Stdout(), "gRPC:       "+p.addr) {
		t.Fatalf("stdout does not say where gRPC is:\n%s", p.Stdout())
	}
	sendOverGRPC(t, p.addr)
	names, err := listServices(t, p.addr)
	if err != nil || !slices.Contains(names, a2aconnect.A2AServiceName) {
		t.Fatalf("reflection: %v %v", names, err)
	}
	// JSON-RPC and REST still answer on the same port.
	if r := p.post(t, "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`); field(r, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("REST on the same port: %v", r)
	}
}

func TestServeGRPCReflectionOff(t *testing.T) {
	p := serve(t, "--store", "memory", "--grpc-reflection=false")
	if _, err := listServices(t, p.addr); connect.CodeOf(err) != connect.CodeUnimplemented {
		t.Fatalf("reflection with --grpc-reflection=false: %v, want Unimplemented", err)
	}
	sendOverGRPC(t, p.addr)
}

func TestServeGRPCAddr(t *testing.T) {
	gaddr := testkit.FreeAddr(t)
	p := serve(t, "--store", "memory", "--grpc-addr", gaddr)
	if target := grpcInterface(t, p); target != gaddr {
		t.Fatalf("GRPC interface url %q, want the --grpc-addr listener %q", target, gaddr)
	}
	sendOverGRPC(t, gaddr)
	sendOverGRPC(t, p.addr) // the main port serves gRPC as well
	resp, err := http.Get("http://" + gaddr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("a plain HTTP request on the gRPC listener: %d, want 415", resp.StatusCode)
	}
	// With a public URL the card keeps its host and takes the listener's port.
	_, port, _ := net.SplitHostPort(testkit.FreeAddr(t))
	p = serve(t, "--store", "memory", "--grpc-addr", "127.0.0.1:"+port, "--public-url", "https://agent.example.com/a2a")
	if target := grpcInterface(t, p); target != "agent.example.com:"+port {
		t.Fatalf("GRPC interface url %q with a public URL", target)
	}
}

// TestServeHTTP2Pings: an idle HTTP/2 connection is pinged every
// --keep-alive, so that gRPC streams that carry no events for a long time
// survive idle timeouts of proxies and NATs, and dead peers are noticed.
func TestServeHTTP2Pings(t *testing.T) {
	p := serve(t, "--store", "memory", "--keep-alive", "200ms")
	conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// h2c with prior knowledge: the preface, then an empty SETTINGS frame.
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	writeFrame := func(typ, flags byte, payload []byte) {
		hdr := make([]byte, 9, 9+len(payload))
		hdr[0], hdr[1], hdr[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
		hdr[3], hdr[4] = typ, flags
		if _, err := conn.Write(append(hdr, payload...)); err != nil {
			t.Fatal(err)
		}
	}
	const frameSettings, framePing = 4, 6
	writeFrame(frameSettings, 0, nil)
	start := time.Now()
	for {
		hdr := make([]byte, 9)
		if _, err := io.ReadFull(conn, hdr); err != nil {
			t.Fatalf("no PING frame from the server after %v: %v", time.Since(start), err)
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		payload := make([]byte, n)
		if _, err := io.ReadFull(conn, payload); err != nil {
			t.Fatal(err)
		}
		switch {
		case hdr[3] == frameSettings && hdr[4]&1 == 0:
			writeFrame(frameSettings, 1, nil) // acknowledge the server's settings
		case hdr[3] == framePing && hdr[4]&1 == 0:
			if binary.BigEndian.Uint32(hdr[5:9]) != 0 || n != 8 {
				t.Fatalf("malformed PING frame")
			}
			return
		}
	}
}
