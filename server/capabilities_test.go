package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// New refuses a card whose capabilities the options do not back, and
// options the card gives no way to reach; the error says what to do.
func TestNewRefusesUnbackedCapabilities(t *testing.T) {
	t.Parallel()
	withExtended := func(c *a2a.AgentCard) *a2a.AgentCard {
		c.Capabilities.ExtendedAgentCard = proto.Bool(true)
		return c
	}
	for _, tc := range []struct {
		name string
		opts server.Options
		want string // in the error; "" means New succeeds
	}{
		{"push declared, no Pusher", server.Options{Card: testCard(true, true)}, "Options.Push is nil"},
		{"Pusher, push not declared", server.Options{Card: testCard(true, false), Push: testkit.NoDelivery{}}, "does not declare capabilities.pushNotifications"},
		{"push declared and served", server.Options{Card: testCard(true, true), Push: testkit.NoDelivery{}}, ""},
		{"push neither declared nor served", server.Options{Card: testCard(true, false)}, ""},
		{"extended card, not declared", server.Options{Card: testCard(true, false), ExtendedCard: testCard(true, false)}, "does not declare capabilities.extendedAgentCard"},
		{"extended card declared and configured", server.Options{Card: withExtended(testCard(true, false)), ExtendedCard: testCard(true, false)}, ""},
		{"extended card declared, not configured", server.Options{Card: withExtended(testCard(true, false))}, ""},
		{"streaming not declared", server.Options{Card: testCard(false, false)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			o.Agent, o.Logger = agents.Echo(), quiet
			s, err := server.New(&o)
			if err == nil {
				t.Cleanup(func() { _ = s.Close(context.Background()) })
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New = %v, want success", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// The card of a built-in agent does not promise push: it is accepted
// without a Pusher, and the push operations say they are not supported.
func TestBuiltinCardNeedsNoPusher(t *testing.T) {
	t.Parallel()
	card, err := agents.Card("echo", []*a2a.AgentInterface{{Url: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}})
	if err != nil {
		t.Fatal(err)
	}
	if card.GetCapabilities().GetPushNotifications() || !card.GetCapabilities().GetStreaming() {
		t.Errorf("agents.Card capabilities = %v, want streaming and no push", card.GetCapabilities())
	}
	s := newServer(t, server.Options{Card: card, Agent: agents.Echo()})
	task := sendTask(t, s, anon(t), "hello")
	_, err = s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "https://example.com/hook"})
	wantErr(t, "CreateTaskPushNotificationConfig", err, a2a.ErrPushNotificationNotSupported)
}

// A card that declares an extended card nobody configured is allowed (the
// operation answers ExtendedAgentCardNotConfiguredError), with a warning.
func TestNewWarnsOfUnconfiguredExtendedCard(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	card := testCard(true, false)
	card.Capabilities.ExtendedAgentCard = proto.Bool(true)
	newServer(t, server.Options{Card: card, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "Options.ExtendedCard is nil") {
		t.Errorf("New logged %q, want a warning about the unconfigured extended card", logs.String())
	}
}
