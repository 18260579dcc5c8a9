package equivalence_test

import (
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// scenario is one row of the equivalence table: a server configuration,
// the calls that set the scene and the call under test (run, which returns
// the outcome of the latter), and the outcome every binding must produce.
type scenario struct {
	op   string // the operation under test
	name string
	cfg  config
	run  func(c *caller) outcome
	want want
	// skip names bindings the scenario cannot be expressed on, and why.
	skip map[string]string
}

// scenarios is the equivalence table, put together from one table per
// operation or group of operations, in the order of the method table.
func scenarios() []scenario {
	return slices.Concat(
		sendMessageOutcomeScenarios(),
		sendMessageRefusalScenarios(),
		sendMessageRequestScenarios(),
		sendStreamingMessageScenarios(),
		getTaskScenarios(),
		listTasksScenarios(),
		cancelTaskScenarios(),
		subscribeToTaskScenarios(),
		createPushConfigScenarios(),
		pushConfigScenarios(),
		extendedCardScenarios(),
		unknownOperationScenarios(),
	)
}

// TestEquivalence runs every scenario over each binding, checks the
// expected outcome, and checks that every binding's outcome equals the
// first binding's once identifiers and timestamps are neutralized.
func TestEquivalence(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.op+"/"+sc.name, func(t *testing.T) {
			t.Parallel()
			var ref, refBinding string
			for _, b := range bindings {
				t.Run(b, func(t *testing.T) {
					if why, ok := sc.skip[b]; ok {
						t.Skip(why)
					}
					e := start(t, sc.cfg)
					c := &caller{t: t, e: e, b: b, z: newNormalizer()}
					c.z.host = strings.TrimPrefix(e.base, "http://")
					o := sc.run(c)
					sc.want.verify(t, o)
					got := c.z.normalize(o, sc.want.anyMessage)
					if ref == "" {
						ref, refBinding = got, b
						return
					}
					if got != ref {
						t.Errorf("the outcome differs from %s's:\n--- %s\n%s--- %s\n%s", refBinding, refBinding, ref, b, got)
					}
				})
			}
		})
	}
}

// TestEquivalenceCoversEveryOperation: the table has scenarios for every
// operation, and for every error the spec lists for it (spec §3.1, under
// each operation).
func TestEquivalenceCoversEveryOperation(t *testing.T) {
	covered := map[string]map[a2a.Code]bool{}
	for _, sc := range scenarios() {
		if covered[sc.op] == nil {
			covered[sc.op] = map[a2a.Code]bool{}
		}
		covered[sc.op][sc.want.code] = true
	}
	specErrors := map[string][]a2a.Code{
		"SendMessage":                      {0, a2a.CodeContentTypeNotSupported, a2a.CodeUnsupportedOperation, a2a.CodeTaskNotFound, a2a.CodePushNotificationNotSupported},
		"SendStreamingMessage":             {0, a2a.CodeUnsupportedOperation, a2a.CodeContentTypeNotSupported, a2a.CodeTaskNotFound},
		"GetTask":                          {0, a2a.CodeTaskNotFound},
		"ListTasks":                        {0},
		"CancelTask":                       {0, a2a.CodeTaskNotCancelable, a2a.CodeTaskNotFound},
		"SubscribeToTask":                  {0, a2a.CodeUnsupportedOperation, a2a.CodeTaskNotFound},
		"CreateTaskPushNotificationConfig": {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"GetTaskPushNotificationConfig":    {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"ListTaskPushNotificationConfigs":  {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"DeleteTaskPushNotificationConfig": {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"GetExtendedAgentCard":             {0, a2a.CodeUnsupportedOperation, a2a.CodeExtendedAgentCardNotConfigured},
	}
	for m := range a2a.Methods() {
		for _, code := range specErrors[m.Name] {
			if !covered[m.Name][code] {
				name := "success"
				if code != 0 {
					name = code.Name()
				}
				t.Errorf("no scenario for %s with outcome %s", m.Name, name)
			}
		}
	}
	// Errors that any operation can return appear somewhere.
	for _, code := range []a2a.Code{a2a.CodeVersionNotSupported, a2a.CodeExtensionSupportRequired, a2a.CodeUnauthenticated,
		a2a.CodeInvalidParams, a2a.CodeInternal, a2a.CodeMethodNotFound, a2a.CodeRequestTooLarge} {
		found := false
		for _, codes := range covered {
			found = found || codes[code]
		}
		if !found {
			t.Errorf("no scenario produces %s", code.Name())
		}
	}
}
