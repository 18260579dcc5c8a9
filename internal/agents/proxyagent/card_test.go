package proxyagent_test

import (
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/proxyagent"
)

// TestCardOfASparseUpstream: an upstream card without a name, skills or
// modes still gives a card with every REQUIRED member.
func TestCardOfASparseUpstream(t *testing.T) {
	card := proxyagent.Card(&a2a.AgentCard{}, []*a2a.AgentInterface{{Url: "http://127.0.0.1:1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion}})
	if v := a2a.CheckRequired(card); len(v) > 0 {
		t.Fatalf("card %v lacks %v", card, v)
	}
	if card.GetName() != "Parley proxy" || card.GetSkills()[0].GetName() != "Parley proxy" {
		t.Errorf("card %v", card)
	}
}
