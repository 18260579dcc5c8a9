package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/pushseal"
	"parley.dev/parley/taskstore/seal"
)

// Push secrets at rest (spec §13.2: "Agents SHOULD securely store push
// notification configurations and credentials").
//
// The secrets of a configuration are the values that let their holder call
// the webhook as the agent: authentication.credentials (sent in the
// Authorization header), token, and the URL itself, which often carries a
// secret of its own (a capability path such as a chat service's incoming
// webhook, an api_key query parameter, user information). With
// Options.PushKeys the push_configs row keeps them apart from the rest:
// data is the configuration with the three cleared, secret is a seal of a
// configuration holding only those three. Sealing the URL also means that
// whoever can write to the file cannot point a configuration, and with it
// the credentials, at a host of their own.
// Every row written with keys has a secret, even an empty one, so that a
// row whose secret is NULL or starts with another header is one to seal
// again (ResealPushConfigs). Without keys, secret is NULL and data is the
// configuration as given, as before schema version 3.
//
// The push outbox keeps no copy of a configuration: its rows join
// push_configs when they are read (PendingPush), so sealing that one table
// covers every stored copy.

// ErrNoPushKey is returned (wrapped) by Open when the database holds
// sealed push secrets but Options.PushKeys is nil, and by the reads of a
// sealed configuration in that case.
var ErrNoPushKey = pushseal.ErrNoKey

// resealBatchSize bounds how many configurations one step of
// ResealPushConfigs reads and rewrites.
const resealBatchSize = 100

// prepareSecrets prepares the statements of ResealPushConfigs.
func (s *Store) prepareSecrets(p *preparer) {
	// Keyset order over the primary key; the secret test picks rows that
	// are plain (NULL) or sealed under another key or format.
	s.resealBatch = p.reader(`SELECT tenant, owner, task_id, id, data, secret FROM push_configs
		WHERE (task_id, id) > (?, ?) AND (secret IS NULL OR substr(secret, 1, ?) IS NOT ?)
		ORDER BY task_id, id LIMIT ?`)
	// Only if the row is unchanged since it was read: a configuration
	// written in between is already sealed under the current key.
	s.resealOne = p.writer(`UPDATE push_configs SET data = ?, secret = ?
		WHERE task_id = ? AND id = ? AND data = ? AND secret IS ?`)
}

// sealConfig encodes c for its push_configs row: without keys, data is c
// and secret nil; with keys, data is c without its URL, token and
// credentials, and secret their seal (package pushseal, shared with
// pgstore, so a value sealed by one store opens in the other).
func (s *Store) sealConfig(sc taskstore.Scope, c *a2a.TaskPushNotificationConfig) (data, secret []byte, err error) {
	data, secret, err = pushseal.Seal(s.keys, sc, c)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlitestore: encode push config: %w", err)
	}
	return data, secret, nil
}

// openConfig decodes a push_configs row, putting its sealed secrets, if
// any, back in place. A secret that does not open is an error naming the
// configuration, never a configuration without its credentials.
func (s *Store) openConfig(sc taskstore.Scope, taskID, configID string, data, secret []byte) (*a2a.TaskPushNotificationConfig, error) {
	c, err := pushseal.Open(s.keys, sc, taskID, configID, data, secret)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	return c, nil
}

// checkPushKeys makes sure that every sealed secret in the database can be
// opened with the keys given: for each key (and format) the database
// holds a secret under, it opens one such secret. Run by Open, so that a
// missing or wrong key stops the program at start-up rather than at its
// first push.
func (s *Store) checkPushKeys(ctx context.Context) error {
	rows, err := s.writer.QueryContext(ctx, `SELECT tenant, owner, task_id, id, data, secret FROM push_configs
		WHERE rowid IN (SELECT min(rowid) FROM push_configs WHERE secret IS NOT NULL
			GROUP BY substr(secret, 1, ?))`, seal.HeaderSize)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ids []string
	var errs []error
	for rows.Next() {
		var r sealedRow
		if err := r.scan(rows); err != nil {
			return err
		}
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
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) > 0 {
		return fmt.Errorf("%w (sealed under key %v)", ErrNoPushKey, ids)
	}
	return errors.Join(errs...)
}

// sealedRow is a push_configs row as checkPushKeys and ResealPushConfigs
// read it.
type sealedRow struct {
	scope            taskstore.Scope
	taskID, configID string
	data, secret     []byte
}

func (r *sealedRow) scan(rows *sql.Rows) error {
	return rows.Scan(&r.scope.Tenant, &r.scope.Owner, &r.taskID, &r.configID, &r.data, &r.secret)
}

// ResealPushConfigs seals again, under the first of Options.PushKeys,
// every push configuration whose secrets are stored in plain text or
// sealed under another key, and returns how many it rewrote. Run it after
// giving a store its first key, so that configurations written before are
// encrypted too, and after putting a new key first, so that the old key
// can be dropped; `parley serve` runs it at every start when it has keys.
// Without it a configuration is sealed under the current key only when it
// is next written (PutPushConfig).
//
// It works in batches, each its own transaction, alongside the store's
// other work; a configuration replaced meanwhile is left to its new
// writer. A configuration whose secrets do not open (see Open) is left as
// it is and reported in the error, after the others are done. When it
// rewrote anything it then checkpoints and truncates the write-ahead log,
// so that the old values leave that file too.
func (s *Store) ResealPushConfigs(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, errors.New("sqlitestore: reseal push configs: no push keys given")
	}
	header := s.keys.Header()
	var after sealedRow
	var done int
	var failed []error
	for {
		batch, err := s.resealCandidates(ctx, after.taskID, after.configID, header)
		if err != nil {
			return done, wrap("reseal push configs", err)
		}
		if len(batch) == 0 {
			break
		}
		after = batch[len(batch)-1]
		type update struct {
			data, secret []byte
			skip         bool // the secrets did not open
		}
		updates := make([]update, len(batch))
		for i, r := range batch {
			c, err := s.openConfig(r.scope, r.taskID, r.configID, r.data, r.secret)
			if err == nil {
				updates[i].data, updates[i].secret, err = s.sealConfig(r.scope, c)
			}
			if err != nil {
				failed = append(failed, err)
				updates[i].skip = true
			}
		}
		var n int
		err = s.write(ctx, func(w *wtx) error {
			n = 0
			for i, r := range batch {
				if updates[i].skip {
					continue
				}
				k, err := affected(w.exec(ctx, s.resealOne, updates[i].data, updates[i].secret,
					r.taskID, r.configID, r.data, r.secret))
				if err != nil {
					return err
				}
				n += int(k)
			}
			return nil
		})
		if err != nil {
			return done, wrap("reseal push configs", err)
		}
		done += n
	}
	if done > 0 {
		var busy, logPages, moved int
		if err := s.writer.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &moved); err != nil {
			return done, wrap("reseal push configs: checkpoint", err)
		}
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("sqlitestore: reseal push configs: %d could not be opened and were left as they are: %w",
			len(failed), errors.Join(failed...))
	}
	return done, nil
}

// resealCandidates reads the next batch of configurations, after the
// (taskID, configID) position, whose secrets do not start with header.
func (s *Store) resealCandidates(ctx context.Context, taskID, configID string, header []byte) ([]sealedRow, error) {
	rows, err := s.resealBatch.QueryContext(ctx, taskID, configID, len(header), header, resealBatchSize)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sealedRow
	for rows.Next() {
		var r sealedRow
		if err := r.scan(rows); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
