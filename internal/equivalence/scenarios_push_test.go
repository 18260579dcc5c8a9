package equivalence_test

import (
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// createPushConfigScenarios: CreateTaskPushNotificationConfig.
func createPushConfigScenarios() []scenario {
	return []scenario{
		{op: "CreateTaskPushNotificationConfig", name: "created", run: func(c *caller) outcome {
			id := c.task(send("input-required")).GetId()
			cfg := pushConfig(id, "https://hooks.example.com/a")
			cfg.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s3cret"}
			return c.call("CreateTaskPushNotificationConfig", cfg)
		}, want: want{check: func(t *testing.T, o outcome) {
			cfg := o.value.(*a2a.TaskPushNotificationConfig)
			if cfg.GetId() == "" || cfg.GetTaskId() == "" || cfg.GetAuthentication().GetScheme() != "Bearer" {
				t.Fatalf("created %v", cfg)
			}
		}}},
		{op: "CreateTaskPushNotificationConfig", name: "bad-url", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), "not a url"))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"url"}}},
		{op: "CreateTaskPushNotificationConfig", name: "no-url", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), ""))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"url"}}},
		{op: "CreateTaskPushNotificationConfig", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(unknownTask, "https://x.example"))
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CreateTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), "https://x.example"))
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "CreateTaskPushNotificationConfig", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required"), alice).GetId(), "https://x.example"), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
	}
}

// pushConfigScenarios: reading, listing and deleting push notification
// configurations.
func pushConfigScenarios() []scenario {
	return []scenario{
		{op: "GetTaskPushNotificationConfig", name: "found", run: func(c *caller) outcome {
			id, cfgID := withPushConfig(c)
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID})
		}, want: want{check: func(t *testing.T, o outcome) {
			if u := o.value.(*a2a.TaskPushNotificationConfig).GetUrl(); u != "https://hooks.example.com/a" {
				t.Fatalf("url %q", u)
			}
		}}},
		{op: "GetTaskPushNotificationConfig", name: "unknown-config", run: func(c *caller) outcome {
			id, _ := withPushConfig(c)
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: "nope"})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "GetTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: c.task(send("input-required")).GetId(), Id: "c"})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "ListTaskPushNotificationConfigs", name: "listed", run: func(c *caller) outcome {
			r := withConfig(send("input-required"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example.com/inline", Token: "tok-1"}})
			id := c.task(r).GetId()
			c.ok("CreateTaskPushNotificationConfig", pushConfig(id, "https://hooks.example.com/a"))
			out := c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: id})
			if res, ok := out.value.(*a2a.ListTaskPushNotificationConfigsResponse); ok {
				// The order of configurations is unspecified (Parley's
				// follows their random ids): compare them sorted.
				slices.SortFunc(res.Configs, func(a, b *a2a.TaskPushNotificationConfig) int { return strings.Compare(a.GetUrl(), b.GetUrl()) })
			}
			return out
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := len(o.value.(*a2a.ListTaskPushNotificationConfigsResponse).GetConfigs()); n != 2 {
				t.Fatalf("%d configs (inline + created), want 2", n)
			}
		}}},
		{op: "ListTaskPushNotificationConfigs", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: unknownTask})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "ListTaskPushNotificationConfigs", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: c.task(send("input-required")).GetId()})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "ListTaskPushNotificationConfigs", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: c.task(send("input-required"), alice).GetId()}, bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "DeleteTaskPushNotificationConfig", name: "deleted-idempotently", run: func(c *caller) outcome {
			id, cfgID := withPushConfig(c)
			del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID}
			c.ok("DeleteTaskPushNotificationConfig", del)
			out := c.call("DeleteTaskPushNotificationConfig", del)
			if g := c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID}); g.err == nil || g.err.code != a2a.CodeTaskNotFound {
				c.t.Fatalf("the deleted config is still there: %v %v", g.value, g.err)
			}
			return out
		}, want: want{}},
		{op: "DeleteTaskPushNotificationConfig", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: unknownTask, Id: "x"})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "DeleteTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: c.task(send("input-required")).GetId(), Id: "c"})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
	}
}

// extendedCardScenarios: GetExtendedAgentCard (docs/decisions.md#b13).
func extendedCardScenarios() []scenario {
	return []scenario{
		{op: "GetExtendedAgentCard", name: "B13-not-declared", cfg: authed, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{code: a2a.CodeUnsupportedOperation}},
		{op: "GetExtendedAgentCard", name: "B13-not-configured", cfg: extendedDeclared, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{code: a2a.CodeExtendedAgentCardNotConfigured}},
		{op: "GetExtendedAgentCard", name: "B13-anonymous", cfg: extendedConfigured, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil)
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "GetExtendedAgentCard", name: "B13-configured", cfg: extendedConfigured, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := o.value.(*a2a.AgentCard).GetName(); n != "Extended" {
				t.Fatalf("card %q", n)
			}
		}}},
	}
}

// unknownOperationScenarios: an operation that does not exist.
func unknownOperationScenarios() []scenario {
	return []scenario{
		{op: "NoSuchOperation", name: "method-not-found", run: func(c *caller) outcome {
			return c.call("NoSuchOperation", nil)
		}, want: want{code: a2a.CodeMethodNotFound, anyMessage: true}},
	}
}
