package pgstore

import (
	"context"

	"parley.dev/parley/taskstore/internal/pushseal"
	"parley.dev/parley/taskstore/internal/sqlstore"
	"parley.dev/parley/taskstore/seal"
)

// ErrNoPushKey is returned (wrapped) by Open when the database holds
// sealed push secrets but Options.PushKeys is nil, and by the reads of a
// sealed configuration in that case.
var ErrNoPushKey = pushseal.ErrNoKey

const (
	// One configuration for each key header (and format) secrets are
	// sealed under.
	sqlSealedSamples = `SELECT DISTINCT ON (substr(secret, 1, $1)) ` + sqlstore.SealedColumns + `
		FROM push_configs WHERE secret IS NOT NULL ORDER BY substr(secret, 1, $1), task_id, id`
	// Only if the row is unchanged since it was read: a configuration
	// written in between is already sealed under the current key.
	sqlResealOne = `UPDATE push_configs SET data = $1, secret = $2
		WHERE task_id = $3 AND id = $4 AND data = $5 AND secret IS NOT DISTINCT FROM $6`
)

// sqlResealBatch reads the next configurations to seal again
// (sqlstore.Dialect.ResealBatchSQL).
var sqlResealBatch = dialect.ResealBatchSQL()

// checkPushKeys makes sure that every sealed secret in the database can be
// opened with the keys given, by opening one secret per key header
// (sqlstore.Sealer.Check).
func (s *Store) checkPushKeys(ctx context.Context) error {
	return s.sealer.CheckRows(s.pool.Query(ctx, sqlSealedSamples, seal.HeaderSize))
}

// ResealPushConfigs seals again, under the first of Options.PushKeys,
// every push configuration whose secrets are stored in plain text or
// sealed under another key, and returns how many it rewrote (see
// sqlitestore.Store.ResealPushConfigs). A configuration whose secrets do
// not open is left as it is and reported in the error.
func (s *Store) ResealPushConfigs(ctx context.Context) (int, error) {
	next := func(after sqlstore.SealedRow, header []byte) (sqlstore.Cursor, error) {
		return s.pool.Query(ctx, sqlResealBatch, after.TaskID, after.ConfigID, len(header), header, sqlstore.ResealBatch)
	}
	// Each row its own statement: those written stay written.
	write := func(updates []sqlstore.Resealed) (done int, err error) {
		for _, u := range updates {
			n, err := affected(s.pool.Exec(ctx, sqlResealOne, u.Args()...))
			if err != nil {
				return done, err
			}
			done += int(n)
		}
		return done, nil
	}
	return s.sealer.ResealAll(next, write)
}
