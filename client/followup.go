package client

// What the Client remembers about the tasks it talks to, so that
// WaitForCompletion never mistakes the state a task was in before a
// follow-up message for the answer to it.
//
// Accepting a follow-up does not change the task's status: the reply to a
// follow-up sent with returnImmediately, and the first event of a follow-up
// stream, still show the INPUT_REQUIRED (or AUTH_REQUIRED) status that
// asked for it. An interrupted status proves it answers the follow-up when
// its status message comes after the follow-up in the task's history, or
// when its timestamp is later than a status known to be from before the
// follow-up, or when the task was seen working (or any status update was
// seen on a subscription) since.

import (
	"sync"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// maxNotes bounds how many tasks the Client remembers.
const maxNotes = 4096

// notes is the Client's memory of its tasks. It is safe for concurrent use.
type notes struct {
	mu    sync.Mutex
	tasks map[string]*note
}

// note is what the Client knows about one task.
type note struct {
	// seen is the timestamp of the last interrupted status observed.
	seen *timestamppb.Timestamp
	// pending is the messageId of a follow-up whose answer has not been
	// observed yet ("" when none).
	pending string
	// stale is a status timestamp known to be from before pending was
	// accepted (nil when unknown).
	stale *timestamppb.Timestamp
}

// get returns the task's note, making one when create is set (nil
// otherwise).
// Callers hold n.mu.
func (n *notes) get(taskID string, create bool) *note {
	if nt := n.tasks[taskID]; nt != nil || !create {
		return nt
	}
	if n.tasks == nil {
		n.tasks = map[string]*note{}
	}
	if len(n.tasks) >= maxNotes {
		n.evict()
	}
	nt := &note{}
	n.tasks[taskID] = nt
	return nt
}

// evict forgets tasks to make room: those without a pending follow-up
// first, then any. Callers hold n.mu.
func (n *notes) evict() {
	for id, nt := range n.tasks {
		if nt.pending == "" {
			delete(n.tasks, id)
		}
		if len(n.tasks) < maxNotes/2 {
			return
		}
	}
	for id := range n.tasks {
		delete(n.tasks, id)
		if len(n.tasks) < maxNotes/2 {
			return
		}
	}
}

// seenAt returns the timestamp of the last interrupted status observed for
// the task (nil when none).
func (n *notes) seenAt(taskID string) *timestamppb.Timestamp {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nt := n.get(taskID, false); nt != nil {
		return nt.seen
	}
	return nil
}

// observe records a status the server reported for a task, outside any
// follow-up bookkeeping: a terminal task is forgotten, an interrupted one
// remembered with its timestamp.
func (n *notes) observe(taskID string, st *a2a.TaskStatus) {
	if taskID == "" || st == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch s := st.GetState(); {
	case a2a.IsTerminal(s):
		delete(n.tasks, taskID)
	case a2a.IsInterrupted(s) && st.GetTimestamp() != nil:
		n.get(taskID, true).seen = st.GetTimestamp()
	}
}

// sent records that the follow-up msgID was accepted on a task: reply is
// the task as the server answered (the reply, or a follow-up stream's first
// event), before is the last interrupted status timestamp observed before
// the send (nil when none).
func (n *notes) sent(msgID string, reply *a2a.Task, before *timestamppb.Timestamp) {
	id, st := reply.GetId(), reply.GetStatus()
	if id == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if a2a.IsTerminal(st.GetState()) {
		delete(n.tasks, id)
		return
	}
	nt := n.get(id, true)
	nt.pending, nt.stale = "", nil
	if !a2a.IsInterrupted(st.GetState()) {
		return // the agent is already on it
	}
	switch answer := answers(reply, msgID); {
	case answer > 0:
	case answer == 0 && before != nil && after(st.GetTimestamp(), before):
	default:
		nt.pending, nt.stale = msgID, st.GetTimestamp()
		return
	}
	nt.seen = st.GetTimestamp()
}

// pendingOn returns the messageId of the task's follow-up still waiting for
// its answer ("" when none).
func (n *notes) pendingOn(taskID string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nt := n.get(taskID, false); nt != nil {
		return nt.pending
	}
	return ""
}

// progressed records that the task moved after the follow-up msgID was
// accepted: its answer is no longer pending.
func (n *notes) progressed(taskID, msgID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if nt := n.get(taskID, false); nt != nil && nt.pending == msgID && msgID != "" {
		nt.pending, nt.stale = "", nil
	}
}

// current reports whether t's state is one WaitForCompletion may return:
// terminal, or interrupted and not older than the last follow-up the Client
// sent on it. A task seen working clears the pending follow-up.
func (n *notes) current(t *a2a.Task) bool {
	st := t.GetStatus()
	switch s := st.GetState(); {
	case a2a.IsTerminal(s):
		n.observe(t.GetId(), st)
		return true
	case !a2a.IsInterrupted(s):
		n.progressed(t.GetId(), n.pendingOn(t.GetId()))
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	nt := n.get(t.GetId(), false)
	if nt == nil || nt.pending == "" {
		return true
	}
	answer := answers(t, nt.pending)
	if answer < 0 || (answer == 0 && (nt.stale == nil || !after(st.GetTimestamp(), nt.stale))) {
		return false
	}
	nt.pending, nt.stale, nt.seen = "", nil, st.GetTimestamp()
	return true
}

// answers tells from t's history whether its status message comes after
// the message msgID: 1 when it does, -1 when it comes before, 0 when the
// history cannot tell (no status message, or either is missing).
func answers(t *a2a.Task, msgID string) int {
	sm := t.GetStatus().GetMessage().GetMessageId()
	if sm == "" || msgID == "" {
		return 0
	}
	mine, theirs := -1, -1
	for i, m := range t.GetHistory() {
		switch m.GetMessageId() {
		case msgID:
			mine = i
		case sm:
			theirs = i
		}
	}
	switch {
	case mine < 0 || theirs < 0:
		return 0
	case theirs > mine:
		return 1
	}
	return -1
}

// after reports whether timestamp a is later than b (false when either is
// missing).
func after(a, b *timestamppb.Timestamp) bool {
	if a == nil || b == nil {
		return false
	}
	return a.GetSeconds() > b.GetSeconds() || (a.GetSeconds() == b.GetSeconds() && a.GetNanos() > b.GetNanos())
}
