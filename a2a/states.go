package a2a

// Short names for the task states. Each is the same value as the generated
// TaskState_TASK_STATE_… constant it stands for, so the two spellings mix
// freely in comparisons and switches. The lifecycle is in §4.1.3 of the A2A
// specification.
const (
	// StateUnspecified is TaskState_TASK_STATE_UNSPECIFIED: no state known.
	StateUnspecified = TaskState_TASK_STATE_UNSPECIFIED
	// StateSubmitted is TaskState_TASK_STATE_SUBMITTED: accepted, not started.
	StateSubmitted = TaskState_TASK_STATE_SUBMITTED
	// StateWorking is TaskState_TASK_STATE_WORKING: the agent is on it.
	StateWorking = TaskState_TASK_STATE_WORKING
	// StateCompleted is TaskState_TASK_STATE_COMPLETED, a terminal state.
	StateCompleted = TaskState_TASK_STATE_COMPLETED
	// StateFailed is TaskState_TASK_STATE_FAILED, a terminal state.
	StateFailed = TaskState_TASK_STATE_FAILED
	// StateCanceled is TaskState_TASK_STATE_CANCELED, a terminal state.
	StateCanceled = TaskState_TASK_STATE_CANCELED
	// StateRejected is TaskState_TASK_STATE_REJECTED, a terminal state.
	StateRejected = TaskState_TASK_STATE_REJECTED
	// StateInputRequired is TaskState_TASK_STATE_INPUT_REQUIRED, an
	// interrupted state: the agent waits for a follow-up message.
	StateInputRequired = TaskState_TASK_STATE_INPUT_REQUIRED
	// StateAuthRequired is TaskState_TASK_STATE_AUTH_REQUIRED, an interrupted
	// state: the agent waits for credentials.
	StateAuthRequired = TaskState_TASK_STATE_AUTH_REQUIRED
)

// Short names for the message roles, the same values as the generated
// Role_ROLE_… constants (§4.1.5 of the A2A specification).
const (
	// RoleUnspecified is Role_ROLE_UNSPECIFIED, not a valid role on the wire.
	RoleUnspecified = Role_ROLE_UNSPECIFIED
	// RoleUser is Role_ROLE_USER: the message comes from the client.
	RoleUser = Role_ROLE_USER
	// RoleAgent is Role_ROLE_AGENT: the message comes from the agent.
	RoleAgent = Role_ROLE_AGENT
)

// IsTerminal reports whether s is COMPLETED, FAILED, CANCELED or REJECTED:
// the task is over and accepts no further messages (§4.1.3 of the A2A
// specification).
func IsTerminal(s TaskState) bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// IsInterrupted reports whether s is INPUT_REQUIRED or AUTH_REQUIRED: the
// task is paused until the client sends a follow-up message on it (§4.1.3 of
// the A2A specification).
func IsInterrupted(s TaskState) bool {
	return s == StateInputRequired || s == StateAuthRequired
}

// IsActive reports whether s is SUBMITTED or WORKING: the agent still has
// the task in hand.
func IsActive(s TaskState) bool {
	return s == StateSubmitted || s == StateWorking
}
