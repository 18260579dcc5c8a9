package check

import (
	"context"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// detect decides whether the target serves Parley's conformance agent: by
// its card (name or skill examples), else by a probe message "message",
// which the conformance agent answers with a Message "pong".
func (s *session) detect(ctx context.Context, t *target) {
	card := s.card
	if strings.Contains(strings.ToLower(card.GetName()), "conformance") {
		s.rep.Conformance, s.rep.Detected = true, "card name"
		return
	}
	for _, sk := range card.GetSkills() {
		for _, ex := range sk.GetExamples() {
			if strings.HasPrefix(ex, "input-required") || strings.HasPrefix(ex, "stream ") {
				s.rep.Conformance, s.rep.Detected = true, "skill examples"
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res := t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")}, callOpts{})
	resp := &a2a.SendMessageResponse{}
	if res.ok() && res.decode(resp) == nil && a2a.FirstText(resp.GetMessage()) == "pong" {
		s.rep.Conformance, s.rep.Detected = true, "probe message answered with pong"
		return
	}
	s.rep.Detected = "not detected (card name, skill examples, probe message \"message\" not answered with \"pong\"): checks needing the conformance agent are skipped"
}
