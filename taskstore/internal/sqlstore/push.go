package sqlstore

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/pushseal"
	"parley.dev/parley/taskstore/seal"
)

// The statements of push configurations and of the push outbox that the
// two stores write alike. A configuration is written (its upsert) and
// claimed differently by each.

// GetConfigSQL reads one configuration's data, secret and version.
func (d *Dialect) GetConfigSQL() string {
	return d.Bind(`SELECT data, secret, version FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
}

// ListConfigsSQL reads a task's configurations for ReadConfigs: one row
// with no configuration when the task has none, no row when the task is
// not in the scope.
func (d *Dialect) ListConfigsSQL() string {
	return `SELECT p.id IS NOT NULL, coalesce(p.id, ''), p.data, p.secret, coalesce(p.version, '') FROM tasks t LEFT JOIN push_configs p ON p.task_id = t.id
		WHERE ` + d.TaskByID("t", 1) + ` ORDER BY p.id`
}

// DeleteConfigSQL removes one configuration; its queued notifications go
// by cascade.
func (d *Dialect) DeleteConfigSQL() string {
	return d.Bind(`DELETE FROM push_configs WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
}

// QueueEventSQL queues an event (seq, bytes, created_ms) for every active
// configuration of a task in a scope; QueueOneSQL for the one whose id
// is its last argument.
func (d *Dialect) QueueEventSQL() string {
	return d.Bind(`INSERT INTO push_outbox (tenant, owner, task_id, config_id, seq, event, created_ms)
		SELECT tenant, owner, task_id, id, ?, ?, ? FROM push_configs
		WHERE task_id = ? AND tenant = ? AND owner = ? AND suspended IS NULL`)
}

// QueueOneSQL: see QueueEventSQL.
func (d *Dialect) QueueOneSQL() string {
	return d.QueueEventSQL() + ` AND id = ` + d.Param(7)
}

// DropQueuedSQL drops a configuration's queued notifications.
func (d *Dialect) DropQueuedSQL() string {
	return d.Bind(`DELETE FROM push_outbox WHERE task_id = ? AND config_id = ?`)
}

// SuspendSQL marks a configuration of a scope suspended, with a reason.
func (d *Dialect) SuspendSQL() string {
	return d.Bind(`UPDATE push_configs SET suspended = ? WHERE task_id = ? AND id = ? AND tenant = ? AND owner = ?`)
}

// PushTargetsOfSQL finds the configurations of one task with queued
// notifications, with their scope.
func (d *Dialect) PushTargetsOfSQL() string {
	return d.Bind(`SELECT config_id, min(tenant), min(owner) FROM push_outbox WHERE task_id = ?
		GROUP BY config_id ORDER BY config_id`)
}

// TargetsOf runs query, PushTargetsOfSQL for the task, and reads its
// rows.
func (d *Dialect) TargetsOf(taskID string, query func() (Cursor, error)) ([]taskstore.PushTarget, error) {
	return Query(d, "push targets", query, func(rows Rows) ([]taskstore.PushTarget, error) { return readTargetsOf(rows, taskID) })
}

// readTargetsOf reads the rows of PushTargetsOfSQL for the task.
func readTargetsOf(rows Rows, taskID string) ([]taskstore.PushTarget, error) {
	var out []taskstore.PushTarget
	for rows.Next() {
		t := taskstore.PushTarget{TaskID: taskID}
		if err := rows.Scan(&t.ConfigID, &t.Scope.Tenant, &t.Scope.Owner); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Sealer encodes push configurations for their rows and decodes them,
// sealing their secrets when it has keys (package pushseal: the same in
// both stores, so a value sealed by one opens in the other).
type Sealer struct {
	D    *Dialect
	Keys *seal.Keys // nil stores the secrets as given
}

// Seal encodes c, of the scope sc, as a row's data and secret.
func (s Sealer) Seal(sc taskstore.Scope, c *a2a.TaskPushNotificationConfig) (data, secret []byte, err error) {
	data, secret, err = pushseal.Seal(s.Keys, sc, c)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: encode push config: %w", s.D.Name, err)
	}
	return data, secret, nil
}

// Open decodes a row, putting its sealed secrets, if any, back in place.
// A secret that does not open is an error naming the configuration, never
// a configuration without its credentials.
func (s Sealer) Open(sc taskstore.Scope, taskID, configID string, data, secret []byte) (*a2a.TaskPushNotificationConfig, error) {
	c, err := pushseal.Open(s.Keys, sc, taskID, configID, data, secret)
	if err != nil {
		return nil, s.D.Err(err)
	}
	return c, nil
}

// Config opens a row's configuration (see Open) and gives it the
// version of the row's version column.
func (s Sealer) Config(sc taskstore.Scope, taskID, configID string, data, secret []byte, version string) (*taskstore.PushConfig, error) {
	c, err := s.Open(sc, taskID, configID, data, secret)
	if err != nil {
		return nil, err
	}
	return &taskstore.PushConfig{TaskPushNotificationConfig: c, Version: version}, nil
}

// ForPut encodes what PutPushConfig writes: the configuration c's data
// and secret, and the event ev queues for it (nil for none). c.Version
// goes in a column of its own, as given.
func (s Sealer) ForPut(sc taskstore.Scope, c *taskstore.PushConfig, ev taskstore.Event) (data, secret, event []byte, err error) {
	if data, secret, err = s.Seal(sc, c.TaskPushNotificationConfig); err != nil {
		return nil, nil, nil, err
	}
	if event, err = s.D.QueuedEvent(ev); err != nil {
		return nil, nil, nil, err
	}
	return data, secret, event, nil
}

// ScanConfig reads a row of GetConfigSQL: taskstore.ErrNotFound without
// one.
func (s Sealer) ScanConfig(row Row, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	var data, secret []byte
	var version string
	err := row.Scan(&data, &secret, &version)
	if s.D.IsNoRows(err) {
		return nil, taskstore.ErrNotFound
	}
	if err != nil {
		return nil, s.D.Wrap("get push config", err)
	}
	return s.Config(sc, taskID, id, data, secret, version)
}

// ReadConfigs reads the rows of ListConfigsSQL: the task's configurations
// ordered by id, or taskstore.ErrNotFound when the task is not in the
// scope.
func ReadConfigs[B ~[]byte](s Sealer, rows Rows, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	found := false
	out := []*taskstore.PushConfig{}
	var has bool
	var id, version string
	var data, secret B
	for rows.Next() {
		found = true
		if err := rows.Scan(&has, &id, &data, &secret, &version); err != nil {
			return nil, s.D.Wrap("list push configs", err)
		}
		if !has {
			continue // the task has no configuration
		}
		c, err := s.Config(sc, taskID, id, data, secret, version)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.D.Wrap("list push configs", err)
	}
	if !found {
		return nil, taskstore.ErrNotFound
	}
	return out, nil
}

// Create is what CreateTaskBatch writes, encoded before its write: the
// task and its events (layout.Create), and the push configuration of the
// first event, if any.
type Create struct {
	layout.Create
	ConfigID       string
	Config, Secret []byte // the configuration's data and secret; nil without one
	ConfigVersion  string // the configuration's version
}

// EncodeCreate encodes a new task of the scope with its events: the first
// one creates it, the others are appended to it.
func (s Sealer) EncodeCreate(sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) (Create, error) {
	enc, err := layout.EncodeCreate(t, evs)
	if err != nil {
		return Create{}, s.D.Err(err)
	}
	c := Create{Create: enc}
	if pc := evs[0].PushConfig; pc != nil {
		if c.Config, c.Secret, err = s.Seal(sc, pc.TaskPushNotificationConfig); err != nil {
			return Create{}, err
		}
		c.ConfigID, c.ConfigVersion = pc.GetId(), pc.Version
	}
	return c, nil
}

// Notification decodes a queued row of the target: its id, sequence
// number and event bytes.
func (d *Dialect) Notification(t taskstore.PushTarget, id, seq int64, event []byte) (*taskstore.Notification, error) {
	n := &taskstore.Notification{Target: t, ID: id, Seq: uint64(seq), Event: new(a2a.StreamResponse)}
	if err := proto.Unmarshal(event, n.Event); err != nil {
		return nil, d.Wrap("decode queued event", err)
	}
	return n, nil
}

// SealedRow is a push_configs row as the key check and the reseal read
// it: the columns of SealedColumns.
type SealedRow struct {
	Scope            taskstore.Scope
	TaskID, ConfigID string
	Data, Secret     []byte
}

// SealedColumns are the columns ReadSealed reads.
const SealedColumns = `tenant, owner, task_id, id, data, secret`

// readBatch reads and closes the rows of a batch to reseal.
func readBatch(rows Cursor, err error) ([]SealedRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return ReadSealed(rows)
}

// ReadSealed reads rows of SealedColumns.
func ReadSealed(rows Rows) ([]SealedRow, error) {
	var out []SealedRow
	for rows.Next() {
		var r SealedRow
		if err := rows.Scan(&r.Scope.Tenant, &r.Scope.Owner, &r.TaskID, &r.ConfigID, &r.Data, &r.Secret); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ErrNoKey is the error of a store given no push keys for a database
// that holds sealed secrets.
var ErrNoKey = pushseal.ErrNoKey

// Check opens one sealed secret of each key (and format) the database
// holds a secret under, samples: without keys, any sample is ErrNoKey,
// naming the keys; with keys, every sample must open. A store runs it
// when it opens, so that a missing or wrong key stops the program at
// start-up rather than at its first push.
func (s Sealer) Check(samples []SealedRow) error {
	var ids []string
	var errs []error
	for _, r := range samples {
		if s.Keys == nil {
			id, err := seal.KeyID(r.Secret)
			if err != nil {
				id = fmt.Sprintf("of unknown format %x", r.Secret[:min(len(r.Secret), seal.HeaderSize)])
			}
			ids = append(ids, id)
			continue
		}
		if _, err := s.Open(r.Scope, r.TaskID, r.ConfigID, r.Data, r.Secret); err != nil {
			errs = append(errs, err)
		}
	}
	if len(ids) > 0 {
		return fmt.Errorf("%w (sealed under key %v)", ErrNoKey, ids)
	}
	return errors.Join(errs...)
}

// CheckRows is Check of the sample rows (of SealedColumns) a query
// returned; it closes them.
func (s Sealer) CheckRows(rows Cursor, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	samples, err := ReadSealed(rows)
	if err != nil {
		return err
	}
	return s.Check(samples)
}

// ResealBatchSQL reads the next configurations, in keyset order over the
// primary key after a (task, config) position, whose secret is plain
// (NULL) or does not start with a header (its length, then its bytes),
// up to a limit.
func (d *Dialect) ResealBatchSQL() string {
	return d.Bind(`SELECT ` + SealedColumns + ` FROM push_configs
		WHERE (task_id, id) > (?, ?) AND (secret IS NULL OR substr(secret, 1, ?) <> ?)
		ORDER BY task_id, id LIMIT ?`)
}

// Resealed is a configuration sealed again, to write only if its row is
// unchanged since it was read.
type Resealed struct {
	SealedRow                 // as read
	NewData, NewSecret []byte // as sealed now
}

// Args are the arguments of the dialect's reseal UPDATE: the new data and
// secret, the key, and the old data and secret.
func (r Resealed) Args() []any {
	return []any{r.NewData, r.NewSecret, r.TaskID, r.ConfigID, r.Data, r.Secret}
}

// Reseal seals the rows of a batch again under the first key, leaving out
// (and returning the errors of) those that do not open.
func (s Sealer) Reseal(batch []SealedRow) (out []Resealed, failed []error) {
	for _, r := range batch {
		c, err := s.Open(r.Scope, r.TaskID, r.ConfigID, r.Data, r.Secret)
		var data, secret []byte
		if err == nil {
			data, secret, err = s.Seal(r.Scope, c)
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		out = append(out, Resealed{SealedRow: r, NewData: data, NewSecret: secret})
	}
	return out, failed
}

// ResealAll is ResealPushConfigs: it seals again, under the first key,
// every configuration whose secrets are plain or sealed under another
// key, a batch at a time, and returns how many rows write changed. next
// queries the batch after a position (ResealBatchSQL, with the first
// key's header); write stores a batch's configurations sealed again, each only
// if its row is unchanged since it was read. A configuration whose
// secrets do not open is left as it is and reported in the error, after
// the others are done.
func (s Sealer) ResealAll(next func(after SealedRow, header []byte) (Cursor, error), write func([]Resealed) (int, error)) (int, error) {
	const op = "reseal push configs"
	if s.Keys == nil {
		return 0, fmt.Errorf("%s: %s: no push keys given", s.D.Name, op)
	}
	header := s.Keys.Header()
	var after SealedRow
	var done int
	var failed []error
	for {
		batch, err := readBatch(next(after, header))
		if err != nil {
			return done, s.D.Wrap(op, err)
		}
		if len(batch) == 0 {
			break
		}
		after = batch[len(batch)-1]
		updates, bad := s.Reseal(batch)
		failed = append(failed, bad...)
		n, err := write(updates)
		done += n
		if err != nil {
			return done, s.D.Wrap(op, err)
		}
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("%s: %s: %d could not be opened and were left as they are: %w",
			s.D.Name, op, len(failed), errors.Join(failed...))
	}
	return done, nil
}
