package v03

import "parley.dev/parley/a2a"

// v0.3's lowercase task states, in the order of a2a.TaskState. v0.3 spells
// canceled with one l; its "unknown" is v1.0's TASK_STATE_UNSPECIFIED.
var stateNames = [...]string{
	a2a.TaskState_TASK_STATE_UNSPECIFIED:    "unknown",
	a2a.TaskState_TASK_STATE_SUBMITTED:      "submitted",
	a2a.TaskState_TASK_STATE_WORKING:        "working",
	a2a.TaskState_TASK_STATE_COMPLETED:      "completed",
	a2a.TaskState_TASK_STATE_FAILED:         "failed",
	a2a.TaskState_TASK_STATE_CANCELED:       "canceled",
	a2a.TaskState_TASK_STATE_INPUT_REQUIRED: "input-required",
	a2a.TaskState_TASK_STATE_REJECTED:       "rejected",
	a2a.TaskState_TASK_STATE_AUTH_REQUIRED:  "auth-required",
}

// StateName returns the v0.3 JSON name of a state ("unknown" for one v0.3
// does not have).
func StateName(s a2a.TaskState) string {
	if int(s) >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// ParseState returns the state of a v0.3 JSON name.
func ParseState(name string) (a2a.TaskState, bool) {
	for i, n := range stateNames {
		if n == name {
			return a2a.TaskState(i), true
		}
	}
	return 0, false
}

// protoStateNames are the v0.3 proto's enum names (its HTTP+JSON and gRPC
// bindings), which spell TASK_STATE_CANCELLED with two l.
var protoStateNames = [...]string{
	a2a.TaskState_TASK_STATE_UNSPECIFIED:    "TASK_STATE_UNSPECIFIED",
	a2a.TaskState_TASK_STATE_SUBMITTED:      "TASK_STATE_SUBMITTED",
	a2a.TaskState_TASK_STATE_WORKING:        "TASK_STATE_WORKING",
	a2a.TaskState_TASK_STATE_COMPLETED:      "TASK_STATE_COMPLETED",
	a2a.TaskState_TASK_STATE_FAILED:         "TASK_STATE_FAILED",
	a2a.TaskState_TASK_STATE_CANCELED:       "TASK_STATE_CANCELLED",
	a2a.TaskState_TASK_STATE_INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
	a2a.TaskState_TASK_STATE_REJECTED:       "TASK_STATE_REJECTED",
	a2a.TaskState_TASK_STATE_AUTH_REQUIRED:  "TASK_STATE_AUTH_REQUIRED",
}

func protoStateName(s a2a.TaskState) string {
	if int(s) >= 0 && int(s) < len(protoStateNames) {
		return protoStateNames[s]
	}
	return "TASK_STATE_UNSPECIFIED"
}

// parseProtoState accepts the v0.3 proto's enum name or number.
func parseProtoState(v any) (a2a.TaskState, bool) {
	switch x := v.(type) {
	case string:
		for i, n := range protoStateNames {
			if n == x {
				return a2a.TaskState(i), true
			}
		}
	case float64:
		if x >= 0 && int(x) < len(protoStateNames) && x == float64(int(x)) {
			return a2a.TaskState(int(x)), true
		}
	}
	return 0, false
}

// Final reports whether a status update in state s is the last event of a
// v0.3 stream: the states at which Parley closes the stream
// (decision B2): a terminal state always, and input-required on
// message/stream (a subscription stays open through it).
func Final(s a2a.TaskState, subscribe bool) bool {
	if a2a.IsTerminal(s) {
		return true
	}
	return !subscribe && s == a2a.TaskState_TASK_STATE_INPUT_REQUIRED
}
