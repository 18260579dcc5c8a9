package client_test

import (
	"errors"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// TestConditionalSendAs11: a request that sets ifGenerationMatch goes to
// an agent whose card lists a 1.1 interface as a 1.1 call, on every
// binding and for both sends: a stale generation is refused with
// TaskGenerationMismatchError (a 1.0 call would have its member ignored
// and be accepted), the current one accepted.
func TestConditionalSendAs11(t *testing.T) {
	e := start(t, config{mutate: func(card *a2a.AgentCard, o *server.Options) {
		o.ProtocolVersions = []string{version.V11, a2a.ProtocolVersion}
	}})
	for _, b := range bindings {
		c := e.client(b, nil)
		tk := send(t, c, "input-required", nil)
		m := a2a.UserMessage("more")
		m.TaskId = tk.Id
		bad := int64(99)
		_, err := c.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &bad}})
		if !errors.Is(err, a2a.ErrTaskGenerationMismatch) {
			t.Errorf("%s: %v", b.name, err)
		}
		m2 := a2a.UserMessage("more")
		m2.TaskId = tk.Id
		_, err = testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: m2, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &bad}}))
		if !errors.Is(err, a2a.ErrTaskGenerationMismatch) {
			t.Errorf("%s stream: %v", b.name, err)
		}
		now, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: tk.Id, CurrentGeneration: new(int64(0))})
		if err != nil || now.GetGeneration() < 1 {
			t.Fatalf("%s: GetTask = %v, %v; want a generation", b.name, now, err)
		}
		m3 := a2a.UserMessage("more")
		m3.TaskId = tk.Id
		gen := now.GetGeneration()
		if _, err := c.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: m3, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &gen}}); err != nil {
			t.Errorf("%s: the current generation %d refused: %v", b.name, gen, err)
		}
	}
}
