package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/conformance"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
)

// shout answers every message with a completed task whose artifact is the
// message's text in capitals.
var shout = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	text := strings.ToUpper(a2a.FirstText(req.Message))
	if err := em.Artifact(a2a.TextArtifact("shout", text)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})

// Grade an agent in a Go test: each check becomes a subtest, which fails
// when the agent breaks a MUST of the specification. Against an agent
// deployed elsewhere, give its URL and the options it needs.
func ExampleTest() {
	testShout := func(t *testing.T) {
		srv := parleytest.NewServer(t, shout)
		conformance.Test(t, srv.URL)
	}
	testDeployed := func(t *testing.T) {
		conformance.Test(t, "https://agent.example.com",
			conformance.WithToken("first-principal-token"),
			conformance.WithSecondToken("second-principal-token"),
			conformance.WithBindings(a2a.BindingJSONRPC))
	}
	_, _ = testShout, testDeployed
}

// Grade an agent served by the test kit and print the verdict.
func ExampleRun() {
	srv, err := parleytest.Start(shout)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	rep, err := conformance.Run(context.Background(), srv.URL)
	if err != nil {
		panic(err)
	}
	fmt.Println("agent:", rep.Agent())
	fmt.Println("verdict:", rep.Verdict())
	fmt.Println("MUST failed:", rep.Count(conformance.Fail))
	for _, r := range rep.Results() {
		if r.ID == "card.served" {
			fmt.Println(r.ID, r.Section, r.Status)
		}
	}
	// Output:
	// agent: test agent
	// verdict: PASS
	// MUST failed: 0
	// card.served §8.1, §8.2, §14.3 PASS
}
