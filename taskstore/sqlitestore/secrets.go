package sqlitestore

import (
	"context"

	"parley.dev/parley/taskstore/internal/pushseal"
	"parley.dev/parley/taskstore/internal/sqlstore"
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

// prepareSecrets prepares the statements of ResealPushConfigs.
func (s *Store) prepareSecrets(p *preparer) {
	s.resealBatch = p.reader(dialect.ResealBatchSQL())
	// Only if the row is unchanged since it was read: a configuration
	// written in between is already sealed under the current key.
	s.resealOne = p.writer(`UPDATE push_configs SET data = ?, secret = ?
		WHERE task_id = ? AND id = ? AND data = ? AND secret IS ?`)
}

// checkPushKeys makes sure that every sealed secret in the database can be
// opened with the keys given: for each key (and format) the database
// holds a secret under, it opens one such secret (sqlstore.Sealer.Check).
func (s *Store) checkPushKeys(ctx context.Context) error {
	return s.sealer.CheckRows(query(s.writer.QueryContext(ctx, `SELECT `+sqlstore.SealedColumns+` FROM push_configs
		WHERE rowid IN (SELECT min(rowid) FROM push_configs WHERE secret IS NOT NULL
			GROUP BY substr(secret, 1, ?))`, seal.HeaderSize)))
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
	next := func(after sqlstore.SealedRow, header []byte) (sqlstore.Cursor, error) {
		return query(s.resealBatch.QueryContext(ctx, after.TaskID, after.ConfigID, len(header), header, sqlstore.ResealBatch))
	}
	write := func(updates []sqlstore.Resealed) (int, error) {
		var n int
		err := s.write(ctx, func(w *wtx) error {
			n = 0
			for _, u := range updates {
				k, err := affected(w.exec(ctx, s.resealOne, u.Args()...))
				if err != nil {
					return err
				}
				n += int(k)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	done, err := s.sealer.ResealAll(next, write)
	if done > 0 {
		if _, cerr := s.checkpoint(ctx, false); cerr != nil && err == nil {
			return done, wrap("reseal push configs: checkpoint", cerr)
		}
	}
	return done, err
}
