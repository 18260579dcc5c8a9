package sqlitestore

import "context"

// OutboxDepth returns how many push notifications are queued in the
// outbox, for the outbox depth metric (package telemetry). It counts the
// table's rows on a reader connection: a scrape costs one index scan.
func (s *Store) OutboxDepth(ctx context.Context) (int64, error) {
	var n int64
	err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_outbox`).Scan(&n)
	return n, err
}
