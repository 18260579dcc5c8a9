package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/pushseal"
	"parley.dev/parley/taskstore/seal"
)

// ErrNoPushKey is returned (wrapped) by Open when the database holds
// sealed push secrets but Options.PushKeys is nil, and by the reads of a
// sealed configuration in that case.
var ErrNoPushKey = pushseal.ErrNoKey

// resealBatchSize bounds how many configurations one step of
// ResealPushConfigs reads and rewrites.
const resealBatchSize = 100

const (
	// One configuration for each key header (and format) secrets are
	// sealed under.
	sqlSealedSamples = `SELECT DISTINCT ON (substr(secret, 1, $1)) tenant, owner, task_id, id, data, secret
		FROM push_configs WHERE secret IS NOT NULL ORDER BY substr(secret, 1, $1), task_id, id`
	// Keyset order over the primary key; the secret test picks rows that
	// are plain (NULL) or sealed under another key or format.
	sqlResealBatch = `SELECT tenant, owner, task_id, id, data, secret FROM push_configs
		WHERE (task_id, id) > ($1, $2) AND (secret IS NULL OR substr(secret, 1, $3) <> $4)
		ORDER BY task_id, id LIMIT $5`
	// Only if the row is unchanged since it was read: a configuration
	// written in between is already sealed under the current key.
	sqlResealOne = `UPDATE push_configs SET data = $1, secret = $2
		WHERE task_id = $3 AND id = $4 AND data = $5 AND secret IS NOT DISTINCT FROM $6`
)

// sealConfig encodes c for its push_configs row (see package pushseal).
func (s *Store) sealConfig(sc taskstore.Scope, c *a2a.TaskPushNotificationConfig) (data, secret []byte, err error) {
	data, secret, err = pushseal.Seal(s.keys, sc, c)
	if err != nil {
		return nil, nil, fmt.Errorf("pgstore: encode push config: %w", err)
	}
	return data, secret, nil
}

// openConfig decodes a push_configs row, opening its sealed secrets.
func (s *Store) openConfig(sc taskstore.Scope, taskID, configID string, data, secret []byte) (*a2a.TaskPushNotificationConfig, error) {
	c, err := pushseal.Open(s.keys, sc, taskID, configID, data, secret)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return c, nil
}

// sealedRow is a push_configs row as checkPushKeys and ResealPushConfigs
// read it.
type sealedRow struct {
	scope            taskstore.Scope
	taskID, configID string
	data, secret     []byte
}

func scanSealed(r pgx.CollectableRow) (sealedRow, error) {
	var x sealedRow
	err := r.Scan(&x.scope.Tenant, &x.scope.Owner, &x.taskID, &x.configID, &x.data, &x.secret)
	return x, err
}

// checkPushKeys makes sure that every sealed secret in the database can be
// opened with the keys given, by opening one secret per key header. Run by
// Open, so that a missing or wrong key stops the program at start-up.
func (s *Store) checkPushKeys(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, sqlSealedSamples, seal.HeaderSize)
	if err != nil {
		return err
	}
	samples, err := pgx.CollectRows(rows, scanSealed)
	if err != nil {
		return err
	}
	var ids []string
	var errs []error
	for _, r := range samples {
		if s.keys == nil {
			id, err := seal.KeyID(r.secret)
			if err != nil {
				id = fmt.Sprintf("of unknown format %x", r.secret[:min(len(r.secret), seal.HeaderSize)])
			}
			ids = append(ids, id)
			continue
		}
		if _, err := s.openConfig(r.scope, r.taskID, r.configID, r.data, r.secret); err != nil {
			errs = append(errs, err)
		}
	}
	if len(ids) > 0 {
		return fmt.Errorf("%w (sealed under key %v)", ErrNoPushKey, ids)
	}
	return errors.Join(errs...)
}

// ResealPushConfigs seals again, under the first of Options.PushKeys,
// every push configuration whose secrets are stored in plain text or
// sealed under another key, and returns how many it rewrote (see
// sqlitestore.Store.ResealPushConfigs). A configuration whose secrets do
// not open is left as it is and reported in the error.
func (s *Store) ResealPushConfigs(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, errors.New("pgstore: reseal push configs: no push keys given")
	}
	header := s.keys.Header()
	var after sealedRow
	var done int
	var failed []error
	for {
		rows, err := s.pool.Query(ctx, sqlResealBatch, after.taskID, after.configID, len(header), header, resealBatchSize)
		if err != nil {
			return done, wrap("reseal push configs", err)
		}
		batch, err := pgx.CollectRows(rows, scanSealed)
		if err != nil {
			return done, wrap("reseal push configs", err)
		}
		if len(batch) == 0 {
			break
		}
		after = batch[len(batch)-1]
		for _, r := range batch {
			c, err := s.openConfig(r.scope, r.taskID, r.configID, r.data, r.secret)
			var data, secret []byte
			if err == nil {
				data, secret, err = s.sealConfig(r.scope, c)
			}
			if err != nil {
				failed = append(failed, err)
				continue
			}
			n, err := affected(s.pool.Exec(ctx, sqlResealOne, data, secret, r.taskID, r.configID, r.data, r.secret))
			if err != nil {
				return done, wrap("reseal push configs", err)
			}
			done += int(n)
		}
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("pgstore: reseal push configs: %d could not be opened and were left as they are: %w",
			len(failed), errors.Join(failed...))
	}
	return done, nil
}
