package check

import (
	"context"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// detect decides which behaviour contract the target's agent speaks, so
// that the behaviour checks can drive it (contract.go). Options.Contract
// declares it; otherwise Parley's conformance agent is recognised by its
// card (name or skill examples) or by a probe message "message", which it
// answers with a Message "pong"; an ACTS agent by two probes, which tell
// it from an agent answering everything alike: "tck-message-response",
// answered with a Message, and "tck-multi-turn", with a Task waiting for
// input (which is then canceled).
func (s *session) detect(ctx context.Context, t *target) {
	switch s.opts.Contract {
	case ContractConformance, ContractACTS:
		s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, s.opts.Contract, "declared"
		return
	case ContractNone:
		s.rep.Detected = "declared: the agent speaks no behaviour contract; the behaviour checks are skipped"
		return
	}
	card := s.card
	if strings.Contains(strings.ToLower(card.GetName()), "conformance") {
		s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractConformance, "card name"
		return
	}
	for _, sk := range card.GetSkills() {
		for _, ex := range sk.GetExamples() {
			if strings.HasPrefix(ex, "input-required") || strings.HasPrefix(ex, "stream ") {
				s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractConformance, "skill examples"
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if a2a.FirstText(probe(ctx, t, "message").GetMessage()) == "pong" {
		s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractConformance, "probe message answered with pong"
		return
	}
	if probe(ctx, t, "tck-message-response").GetMessage() != nil {
		task := probe(ctx, t, "tck-multi-turn").GetTask()
		if task != nil && !a2a.IsTerminal(task.GetStatus().GetState()) {
			t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: task.GetId()}, callOpts{})
		}
		if task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractACTS,
				"probes tck-message-response and tck-multi-turn answered with a Message and a task waiting for input (ACTS's behaviour contract)"
			return
		}
	}
	s.rep.Detected = "no behaviour contract detected (card name, skill examples; probe \"message\" not answered with \"pong\", " +
		"probes \"tck-message-response\" and \"tck-multi-turn\" not with a Message and a task waiting for input): the behaviour checks are skipped"
}

// probe sends text and returns the agent's answer (empty when there was
// none).
func probe(ctx context.Context, t *target, text string) *a2a.SendMessageResponse {
	res := t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}, callOpts{})
	resp := &a2a.SendMessageResponse{}
	if !res.ok() || res.decode(resp) != nil {
		return &a2a.SendMessageResponse{}
	}
	return resp
}
