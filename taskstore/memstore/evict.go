package memstore

import (
	"slices"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// The bound on tasks (Options.MaxTasks).
//
// Store.finished queues the terminal tasks in the order they became
// terminal. A new task that would pass the bound takes them from the
// front until it fits, so an eviction costs a constant amount plus the
// removal from the indexes, where the task is among the oldest (see
// index.remove): no scan. Tasks removed otherwise (DeleteFinished) stay
// in the queue, marked gone, and are skipped; the queue is compacted when
// they make up half of it, which keeps the work per task constant on
// average.
//
// Only terminal tasks are queued, and a terminal task has no stream open
// on it: the server core ends every stream of a task with its terminal
// event, and refuses SubscribeToTask on a terminal task (spec §3.1.6), so
// evicting one cuts no subscriber off. What an evicted task leaves behind
// are the records of the messages that made or continued it; they are
// marked (MessageRecord.TaskEvicted) so that a resend is answered
// TaskNotFound rather than run a second time (spec §3.3.1), and go with
// the idempotency window like every record.

// noteFinished queues e for eviction once it is terminal. Callers hold
// the write lock and have indexed e under its current state.
func (s *Store) noteFinished(e *entry) {
	if s.max > 0 && !e.queued && a2a.IsTerminal(e.state) {
		e.queued = true
		s.finished = append(s.finished, e)
	}
}

// makeRoom evicts finished tasks, oldest first, until one more task fits
// under the bound, or none is left to evict. Callers hold the write lock.
func (s *Store) makeRoom() {
	if s.max <= 0 {
		return
	}
	for len(s.tasks) >= s.max && len(s.finished) > 0 {
		e := s.finished[0]
		s.finished[0] = nil
		s.finished = s.finished[1:]
		e.queued = false
		switch {
		case e.gone:
			s.deadFinished--
		case a2a.IsTerminal(e.state): // a task may, in principle, be changed out of a terminal state
			s.evict(e)
		}
	}
}

// evict removes a terminal task with everything the store keeps for it,
// and marks the message records that name it. Callers hold the write lock.
func (s *Store) evict(e *entry) {
	s.unlink(e)
	for id := range e.configs {
		s.resetConfig(configKey{e.key.ID, id})
	}
	for _, r := range e.msgs {
		r.evicted = true
	}
	s.forget(e)
}

// forget lets go of what an entry removed from the task map and the
// indexes still holds, and keeps count of the references to it left in
// the eviction queue and in the event walk of PruneEvents (logged), which
// it compacts when those are half dead. Callers hold the write lock.
func (s *Store) forget(e *entry) {
	e.gone = true
	if e.queued {
		s.deadFinished++
	}
	// Each span of the log has an entry in logged, except perhaps the
	// last, which PruneEvents may have walked past and kept.
	s.deadLogged += len(e.log.spans)
	e.task, e.packed, e.log, e.configs, e.msgs = nil, nil, eventLog{}, nil, nil
	e.decoded.Store(nil)
	if s.deadFinished > len(s.finished)/2 {
		s.finished = slices.DeleteFunc(s.finished, func(e *entry) bool {
			if e.gone {
				e.queued = false
			}
			return e.gone
		})
		s.deadFinished = 0
	}
	if s.deadLogged > len(s.logged)/2 {
		s.logged = slices.DeleteFunc(s.logged, func(l loggedAt) bool { return l.e == nil || l.e.gone })
		s.deadLogged = 0
	}
}

// linkMessages links e to the records of the messages in its history that
// name it: those that made it, recorded before it was created. PutMessage
// links the later ones. Callers hold the write lock.
func (s *Store) linkMessages(e *entry, history []*a2a.Message) {
	if s.max <= 0 {
		return
	}
	in := s.messages[e.scope]
	if in == nil {
		return
	}
	for _, msg := range history {
		if r := in.byID[msg.GetMessageId()]; r != nil && r.taskID == e.key.ID && !slices.Contains(e.msgs, r) {
			e.msgs = append(e.msgs, r)
		}
	}
}

// linkRecord links a new message record to the task it names, when that
// task is stored. Callers hold the write lock.
func (s *Store) linkRecord(sc taskstore.Scope, r *record) {
	if s.max <= 0 || r.taskID == "" {
		return
	}
	if e := s.lookup(sc, r.taskID); e != nil {
		e.msgs = append(e.msgs, r)
	}
}
