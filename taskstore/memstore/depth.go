package memstore

import "context"

// OutboxDepth returns how many push notifications are queued in the
// outbox, for the outbox depth metric (package telemetry).
func (s *Store) OutboxDepth(context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.where)), nil
}
