package server

// DigestOf is digestOf, for tests that write a message's idempotency
// record themselves.
var DigestOf = digestOf

// TaskLoaded reports whether the live run of task id (empty scope) holds
// a copy of the task, and whether there is a live run at all.
func (s *Server) TaskLoaded(id string) (loaded, live bool) {
	s.mu.Lock()
	var r *run
	for k, v := range s.runs {
		if k.id == id {
			r = v
		}
	}
	s.mu.Unlock()
	if r == nil {
		return false, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task != nil, true
}

// Waiters returns how many calls wait on the live run of task id (any
// scope): blocking sends and long polls being held.
func (s *Server) Waiters(id string) int {
	n := 0
	for _, r := range s.liveRuns() {
		if r.id == id {
			r.mu.Lock()
			n += len(r.waiters)
			r.mu.Unlock()
		}
	}
	return n
}
