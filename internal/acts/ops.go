package acts

import "parley.dev/parley/a2a"

// operations maps the abstract operations (ACTS §4.1) to the method
// table's names ("" for the public card). The official suite also spells
// the push operations after the spec's method names
// (set_push_notification_config, …); both spellings are read.
var operations = map[string]string{
	"send_message":                    a2a.MethodSendMessage,
	"send_streaming_message":          a2a.MethodSendStreamingMessage,
	"get_task":                        a2a.MethodGetTask,
	"list_tasks":                      a2a.MethodListTasks,
	"cancel_task":                     a2a.MethodCancelTask,
	"subscribe_to_task":               a2a.MethodSubscribeToTask,
	"get_agent_card":                  "",
	"get_extended_agent_card":         a2a.MethodGetExtendedAgentCard,
	"create_push_config":              a2a.MethodCreateTaskPushNotificationConfig,
	"set_push_notification_config":    a2a.MethodCreateTaskPushNotificationConfig,
	"get_push_config":                 a2a.MethodGetTaskPushNotificationConfig,
	"get_push_notification_config":    a2a.MethodGetTaskPushNotificationConfig,
	"list_push_configs":               a2a.MethodListTaskPushNotificationConfigs,
	"list_push_notification_configs":  a2a.MethodListTaskPushNotificationConfigs,
	"delete_push_config":              a2a.MethodDeleteTaskPushNotificationConfig,
	"delete_push_notification_config": a2a.MethodDeleteTaskPushNotificationConfig,
}

// draftErrorNames are error names of the draft's table (ACTS §6.2) that
// the A2A v1.0.1 specification (§5.4) names otherwise or does not have:
// each is read as the specification's error a server sends in its place.
var draftErrorNames = map[string]struct {
	spec string
	note string
}{
	"ExtendedCardNotSupportedError": {"ExtendedAgentCardNotConfiguredError",
		"the draft's ExtendedCardNotSupportedError is the specification's ExtendedAgentCardNotConfiguredError (spec §5.4)"},
	"StreamingNotSupportedError": {"UnsupportedOperationError",
		"the specification has no StreamingNotSupportedError (its -32007 is ExtendedAgentCardNotConfiguredError); a server without streaming answers UnsupportedOperationError (spec §3.1.2, §5.4)"},
}

// draftRESTPushNote says the runner uses the specification's HTTP+JSON
// push routes, not the draft's (ACTS §4.1).
const draftRESTPushNote = "ACTS §4.1 names the HTTP+JSON push routes /tasks/{id}/pushNotifications; the runner uses the specification's /tasks/{taskId}/pushNotificationConfigs (spec §11.3)"
