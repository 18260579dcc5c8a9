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
// answers with a Message "pong"; an ACTS agent by a probe message
// "tck-message-response", which ACTS's contract answers with a Message (a
// Task would be any agent's answer to anything).
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
	if m := probe(ctx, t, "message"); a2a.FirstText(m) == "pong" {
		s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractConformance, "probe message answered with pong"
		return
	}
	if m := probe(ctx, t, "tck-message-response"); m != nil {
		s.rep.Conformance, s.rep.Contract, s.rep.Detected = true, ContractACTS, "probe message tck-message-response answered with a Message (ACTS's behaviour contract)"
		return
	}
	s.rep.Detected = "no behaviour contract detected (card name, skill examples; probe \"message\" not answered with \"pong\", " +
		"probe \"tck-message-response\" not with a Message): the behaviour checks are skipped"
}

// probe sends text and returns the Message the agent answered with, or
// nil when it answered otherwise.
func probe(ctx context.Context, t *target, text string) *a2a.Message {
	res := t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}, callOpts{})
	resp := &a2a.SendMessageResponse{}
	if !res.ok() || res.decode(resp) != nil {
		return nil
	}
	return resp.GetMessage()
}
