package sqlstore

import (
	"strings"
)

// Schema version 6 of both stores gives push_configs a version column:
// the protocol version a configuration was registered in (spec §3.6.2,
// taskstore.PushConfig.Version). Before it, a configuration registered
// over v0.3 was told apart by a mark on its URL's fragment, which the
// migration takes off the URL and turns into the version "0.3"; every
// other row gets the column's default, "1.0".

// VersionColumn is the column schema version 6 adds: rows it does not
// convert (UnmarkV03) get the default.
const VersionColumn = `version text NOT NULL DEFAULT '1.0'`

// v03Mark is the v0.3 mark of a configuration stored before schema
// version 6: the URL's fragment is this ("#a2a-version=0.3") or ends
// with it after "&" (a fragment the caller gave, then "&a2a-version=0.3").
const v03Mark = "a2a-version=0.3"

// unmarkV03 returns u without the v0.3 mark, and whether it had one. Only
// the fragment is looked at: the mark was never put anywhere else.
func unmarkV03(u string) (string, bool) {
	i := strings.IndexByte(u, '#')
	if i < 0 {
		return u, false
	}
	switch frag := u[i+1:]; {
	case frag == v03Mark:
		return u[:i], true
	case strings.HasSuffix(frag, "&"+v03Mark):
		return u[:len(u)-len(v03Mark)-1], true
	}
	return u, false
}

// ConfigBatchSQL reads the next configurations (SealedColumns), in keyset
// order over the primary key after a (task, config) position, up to a
// limit.
func (d *Dialect) ConfigBatchSQL() string {
	return d.Bind(`SELECT ` + SealedColumns + ` FROM push_configs
		WHERE (task_id, id) > (?, ?) ORDER BY task_id, id LIMIT ?`)
}

// SetV03SQL rewrites one configuration (data, secret, task id, id) as
// registered over v0.3.
func (d *Dialect) SetV03SQL() string {
	return d.Bind(`UPDATE push_configs SET data = ?, secret = ?, version = '0.3' WHERE task_id = ? AND id = ?`)
}

// UpgradeBatch bounds how many configurations one step of UnmarkV03
// reads.
const UpgradeBatch = 500

// UnmarkV03 is the data step of schema version 6, run inside the
// migration's transaction after the column is added: every configuration
// whose URL carries the v0.3 mark is written again (write: the dialect's
// SetV03SQL with the Resealed's new data and secret and its key) without
// the mark, and so with the version "0.3". next queries the batch after a
// position (ConfigBatchSQL, UpgradeBatch rows). A URL is sealed with the
// other secrets when the store has keys, so every configuration is opened:
// one that does not open (no key, a wrong key) fails the migration, as
// it would fail the store's opening (Check) anyway, and the database is
// left at its version. A rewritten configuration is sealed under the
// first key, as a write of it would be.
func (s Sealer) UnmarkV03(next func(after SealedRow) (Cursor, error), write func(Resealed) error) error {
	var after SealedRow
	for {
		batch, err := readBatch(next(after))
		if err != nil {
			return err
		}
		for _, r := range batch {
			c, err := s.Open(r.Scope, r.TaskID, r.ConfigID, r.Data, r.Secret)
			if err != nil {
				return err
			}
			u, marked := unmarkV03(c.GetUrl())
			if !marked {
				continue
			}
			c.Url = u
			data, secret, err := s.Seal(r.Scope, c)
			if err != nil {
				return err
			}
			if err := write(Resealed{SealedRow: r, NewData: data, NewSecret: secret}); err != nil {
				return err
			}
		}
		if len(batch) < UpgradeBatch {
			return nil
		}
		after = batch[len(batch)-1]
	}
}

// SetV03Args are the arguments of SetV03SQL for r.
func (r Resealed) SetV03Args() []any {
	return []any{r.NewData, r.NewSecret, r.TaskID, r.ConfigID}
}
