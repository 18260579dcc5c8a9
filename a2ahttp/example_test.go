package a2ahttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/server"
)

// Serve an agent over both HTTP bindings and call it over HTTP+JSON.
func Example() {
	shout := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		if err := em.Artifact(a2a.TextArtifact("shout", strings.ToUpper(a2a.FirstText(req.Message)))); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})

	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	card := &a2a.AgentCard{Name: "Shouter", Description: "Repeats what it hears, louder.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Capabilities: &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "shout", Name: "Shout", Description: "Upper-cases the text.", Tags: []string{"text"}}},
	}
	srv, err := server.New(&server.Options{Card: card, Agent: shout})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		panic(err)
	}
	hs.Config.Handler = h
	hs.Start()
	defer hs.Close()

	req, _ := http.NewRequest("POST", base+"/message:send",
		strings.NewReader(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`))
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)

	var out a2a.SendMessageResponse
	if err := a2a.Unmarshal(body, &out); err != nil {
		panic(err)
	}
	task := out.GetTask()
	fmt.Println(resp.Header.Get("Content-Type"))
	fmt.Println(task.GetStatus().GetState())
	fmt.Println(a2a.JoinText(task.GetArtifacts()[0].GetParts()))
	// Output:
	// application/a2a+json
	// TASK_STATE_COMPLETED
	// HELLO
}
