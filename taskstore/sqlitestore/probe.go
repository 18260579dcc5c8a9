package sqlitestore

import (
	"context"
	"time"
)

// ProbeWrite implements taskstore.WriteProber: it rewrites the one row of
// the write_probe table in a transaction of its own, committed as every
// write is, so it fails when writes fail (a full disk, I/O errors) and
// succeeds again once they can.
func (s *Store) ProbeWrite(ctx context.Context) error {
	err := s.write(ctx, func(w *wtx) error {
		_, err := w.exec(ctx, s.probeWrite, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return wrap("probe write", err)
	}
	return nil
}
