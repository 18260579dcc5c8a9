package server_test

// The checks every operation starts with: protocol versions (B7),
// extensions, the extended agent card (B13) and capability gating (spec
// §3.3.4). B7 and B13 are in docs/decisions.md.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

func TestVersionNegotiation(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"", false}, {"1.0", true}, {"1.0.3", true}, {" 1.0 ", true},
		{"0.3", false}, {"2.0", false}, {"1", false}, {"1.1", false}, {"0.3.0", false},
	} {
		t.Run(fmt.Sprintf("%q", tc.version), func(t *testing.T) {
			t.Parallel()
			for _, o := range operations(s, "no-such-task", "no-such-config") {
				err := o.call(as(t, "", version(tc.version)))
				if tc.ok {
					if errors.Is(err, a2a.ErrVersionNotSupported) {
						t.Errorf("%s: version %q refused: %v", o.name, tc.version, err)
					}
					continue
				}
				var e *a2a.Error
				if !errors.As(err, &e) || e.Code != a2a.CodeVersionNotSupported {
					t.Errorf("%s: err = %v, want VersionNotSupportedError", o.name, err)
					continue
				}
				if !strings.Contains(e.Metadata["supportedVersions"], "1.0") {
					t.Errorf("%s: metadata %v does not list the supported versions", o.name, e.Metadata)
				}
				if !strings.Contains(e.Message, "1.0") {
					t.Errorf("%s: message %q does not say which versions are supported", o.name, e.Message)
				}
			}
		})
	}
}

func TestExtensions(t *testing.T) {
	t.Parallel()
	const (
		req = "https://ext.example/required"
		opt = "https://ext.example/optional"
		und = "https://ext.example/undeclared"
	)
	card := testCard(true, true)
	card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: req, Required: true}, {Uri: opt}}
	var got atomic.Pointer[[]string]
	s := newServer(t, server.Options{Card: card, Agent: server.AgentFunc(func(ctx context.Context, r *server.Request, em *server.Emitter) error {
		exts := slices.Clone(r.Extensions)
		got.Store(&exts)
		return em.Reply(a2a.AgentMessage("ok"))
	})})

	t.Run("required missing", func(t *testing.T) {
		for _, exts := range [][]string{nil, {opt}, {und}} {
			for _, o := range operations(s, "no-such-task", "cfg") {
				err := o.call(as(t, "", extensions(exts...)))
				wantErr(t, fmt.Sprintf("%s with %v", o.name, exts), err, a2a.ErrExtensionSupportRequired)
			}
		}
	})
	t.Run("declared ones activated", func(t *testing.T) {
		ci := &a2a.CallInfo{Version: "1.0", Extensions: []string{und, req, opt, req}}
		ctx := a2a.WithCallInfo(as(t, ""), ci)
		if _, err := s.SendMessage(ctx, msgReq("hi")); err != nil {
			t.Fatal(err)
		}
		if want := []string{req, opt}; !slices.Equal(ci.Activated, want) {
			t.Errorf("CallInfo.Activated = %v, want %v", ci.Activated, want)
		}
		if p := got.Load(); p == nil || !slices.Equal(*p, []string{req, opt}) {
			t.Errorf("agent saw extensions %v, want %v", p, []string{req, opt})
		}
	})
	t.Run("activated on other operations", func(t *testing.T) {
		ci := &a2a.CallInfo{Version: "1.0", Extensions: []string{req}}
		_, err := s.GetTask(a2a.WithCallInfo(as(t, ""), ci), &a2a.GetTaskRequest{Id: "nope"})
		wantErr(t, "GetTask", err, a2a.ErrTaskNotFound)
		if !slices.Equal(ci.Activated, []string{req}) {
			t.Errorf("CallInfo.Activated = %v", ci.Activated)
		}
	})
}

func TestExtendedAgentCard(t *testing.T) {
	t.Parallel()
	declared := testCard(true, true)
	declared.Capabilities.ExtendedAgentCard = proto.Bool(true)
	extended := proto.Clone(declared).(*a2a.AgentCard)
	extended.Name = "the extended card"
	for _, tc := range []struct {
		name      string
		card      *a2a.AgentCard
		ext       *a2a.AgentCard
		principal string
		want      error
	}{
		{"not declared, anonymous", testCard(true, true), nil, "", a2a.ErrUnsupportedOperation},
		{"not declared, authenticated", testCard(true, true), nil, "alice", a2a.ErrUnsupportedOperation},
		{"declared, anonymous", declared, extended, "", a2a.ErrUnauthenticated},
		{"declared, not configured", declared, nil, "alice", a2a.ErrExtendedAgentCardNotConfigured},
		{"configured", declared, extended, "alice", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, server.Options{Card: tc.card, ExtendedCard: tc.ext})
			got, err := s.GetExtendedAgentCard(as(t, tc.principal), &a2a.GetExtendedAgentCardRequest{})
			if tc.want != nil {
				wantErr(t, "GetExtendedAgentCard", err, tc.want)
				return
			}
			if err != nil || !proto.Equal(got, extended) {
				t.Errorf("GetExtendedAgentCard = %v, %v; want the extended card", got, err)
			}
		})
	}
}

func TestCapabilityGating(t *testing.T) {
	t.Parallel()
	t.Run("no streaming", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{Card: testCard(false, true)})
		task := sendTask(t, s, anon(t), "input-required")
		_, err := testkit.Collect(s.SendStreamingMessage(anon(t), msgReq("hello")))
		wantErr(t, "SendStreamingMessage", err, a2a.ErrUnsupportedOperation)
		_, err = testkit.Collect(s.SendStreamingMessage(anon(t), followReq(task.Id, "more")))
		wantErr(t, "SendStreamingMessage follow-up", err, a2a.ErrUnsupportedOperation)
		_, err = testkit.Collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: task.Id}))
		wantErr(t, "SubscribeToTask", err, a2a.ErrUnsupportedOperation)
		if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); len(got.GetHistory()) != len(task.History) {
			t.Errorf("refused stream still appended to the task: %v", historyTexts(got))
		}
	})
	t.Run("no push", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		s := newServer(t, server.Options{Card: testCard(true, false), Agent: counting(agents.Conformance(), &calls)})
		task := sendTask(t, s, anon(t), "input-required")
		for _, o := range operations(s, task.Id, "cfg") {
			if strings.Contains(o.name, "PushNotification") {
				wantErr(t, o.name, o.call(anon(t)), a2a.ErrPushNotificationNotSupported)
			}
		}
		inline := &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/x"}}
		before := calls.Load()
		_, err := s.SendMessage(anon(t), withConfig(msgReq("hello"), inline))
		wantErr(t, "SendMessage with an inline config", err, a2a.ErrPushNotificationNotSupported)
		_, err = testkit.Collect(s.SendStreamingMessage(anon(t), withConfig(msgReq("hello"), inline)))
		wantErr(t, "SendStreamingMessage with an inline config", err, a2a.ErrPushNotificationNotSupported)
		if calls.Load() != before {
			t.Errorf("the agent ran for a refused request")
		}
	})
}
