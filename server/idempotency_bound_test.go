package server_test

import (
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// TestResendPastMessageBound: the memory store keeps the records of its
// last MaxMessages messages (memstore.Options.MaxMessages): a resend of
// one of them is answered with its reply, the agent not run; a resend of
// an older one, whose record went, runs again, as after the idempotency
// window.
func TestResendPastMessageBound(t *testing.T) {
	t.Parallel()
	const bound = 3
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls),
		Store: memstore.NewWith(&memstore.Options{MaxMessages: bound})})
	reqs := make([]*a2a.SendMessageRequest, bound+2)
	replies := make([]*a2a.Message, len(reqs))
	for i := range reqs {
		reqs[i] = msgReq("message")
		resp, err := s.SendMessage(anon(t), proto.Clone(reqs[i]).(*a2a.SendMessageRequest))
		if err != nil || resp.GetMessage() == nil {
			t.Fatalf("send %d: %v, %v", i, resp, err)
		}
		replies[i] = resp.GetMessage()
	}
	ran := calls.Load()
	for i := len(reqs) - bound; i < len(reqs); i++ {
		resp, err := s.SendMessage(anon(t), proto.Clone(reqs[i]).(*a2a.SendMessageRequest))
		if err != nil || !proto.Equal(resp.GetMessage(), replies[i]) {
			t.Errorf("resend %d, within the bound: %v, %v; want its reply %v", i, resp, err, replies[i])
		}
	}
	if n := calls.Load(); n != ran {
		t.Errorf("the agent ran %d more times for resends within the bound, want none", n-ran)
	}
	resp, err := s.SendMessage(anon(t), proto.Clone(reqs[0]).(*a2a.SendMessageRequest))
	if err != nil || resp.GetMessage() == nil || resp.GetMessage().MessageId == replies[0].MessageId {
		t.Errorf("resend 0, past the bound: %v, %v; want a new reply", resp, err)
	}
	if n := calls.Load(); n != ran+1 {
		t.Errorf("the agent ran %d more times for a resend past the bound, want once", n-ran)
	}
}
