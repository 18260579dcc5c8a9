package jsonrpc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

func TestRepeatedKey(t *testing.T) {
	for _, tc := range []struct {
		obj  string
		want string // "" when no key repeats
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, ""},
		{`{"method":"a","method":"b"}`, "method"},
		{`{"method":"a","\u006dethod":"b"}`, "method"},
		{`{"params":{"id":1,"id":2},"id":3}`, ""},
		{`{"params":[{"a":1},{"a":2}],"a":3}`, ""},
		{`{"x":"\",\"x\":","y":1}`, ""},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"j":11}`, "j"},
		{` { "id" : 1 , "id" : 2 } `, "id"},
	} {
		_, got, dup := splitMembers([]byte(tc.obj))
		if got != tc.want || dup != (tc.want != "") {
			t.Errorf("splitMembers(%s) = %q, %v; want %q", tc.obj, got, dup, tc.want)
		}
	}
}

// TestSplitMembers: the raw values of the JSON-RPC members, found by exact
// name at the top level only, whatever the whitespace and escapes.
func TestSplitMembers(t *testing.T) {
	m, _, dup := splitMembers([]byte(` { "params" : {"id":9,"a":[1,{"method":2}]} ,"\u0069d":"r-1", "x":{"jsonrpc":1},` +
		"\n\"method\":\"GetTask\"\t,\"jsonrpc\" : \"2.0\" } "))
	if dup {
		t.Fatal("a repeated key reported")
	}
	for name, c := range map[string][2]string{
		"jsonrpc": {string(m.jsonrpc), `"2.0"`}, "id": {string(m.id), `"r-1"`},
		"method": {string(m.method), `"GetTask"`}, "params": {string(m.params), `{"id":9,"a":[1,{"method":2}]}`},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %s, want %s", name, c[0], c[1])
		}
	}
	if m, _, _ := splitMembers([]byte(`{"method":"x"}`)); m.id != nil || m.params != nil {
		t.Errorf("absent members read as %q and %q", m.id, m.params)
	}
}

// TestDuplicateMemberRefused: over HTTP, an envelope member given twice is
// an invalid request, whichever of the two would have run.
func TestDuplicateMemberRefused(t *testing.T) {
	card := &a2a.AgentCard{Name: "n", Description: "d", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "http://x/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}},
		Capabilities:        &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "s", Name: "s", Description: "s", Tags: []string{"s"}}}}
	srv, err := server.New(&server.Options{Card: card, Agent: server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.StatusText(a2a.StateCompleted, "done")
	}), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(NewHandler(srv, nil))
	defer hs.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","method":"GetTask","params":{}}`
	req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	io.Copy(&b, resp.Body)
	if !strings.Contains(b.String(), `"code":-32600`) || !strings.Contains(b.String(), "more than once") {
		t.Errorf("duplicate method: %s, want -32600 naming the repeated member", b.String())
	}
}
