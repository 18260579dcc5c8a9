package pgstore

// Several processes on one database (Store.Join): replica leases, the
// fence on task writes, tasks whose runner died, and keys every replica
// shares.

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

// The fence of a task write (CreateTask, Append), with the writer's epoch
// as parameter $n: no epoch (0) writes freely, as a Store that never
// joined; otherwise the epoch's lease must hold at the database's clock.
// A replica that was paused or cut off past its lease therefore cannot
// write over what the others did meanwhile (they may have ended its
// tasks FAILED), whatever its own clock says.
const (
	fenced7  = `($7::bigint = 0 OR EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $7 AND lease_until > now()))`
	fenced10 = `($10::bigint = 0 OR EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $10 AND lease_until > now()))`
	fenced12 = `($12::bigint = 0 OR EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $12 AND lease_until > now()))`
	fenced13 = `($13::bigint = 0 OR EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $13 AND lease_until > now()))`
)

// leftEpoch is the fence of a Store whose replica left: no lease has it,
// so every task write is refused.
const leftEpoch = -1

const (
	sqlJoin  = `INSERT INTO parley_replicas (name, lease_until) VALUES ($1, now() + $2 * interval '1 millisecond') RETURNING epoch`
	sqlRenew = `UPDATE parley_replicas SET lease_until = now() + $2 * interval '1 millisecond'
		WHERE epoch = $1 AND lease_until > now()`
	sqlLeaseHolds = `SELECT EXISTS (SELECT 1 FROM parley_replicas WHERE epoch = $1 AND lease_until > now())`
	sqlLeave      = `DELETE FROM parley_replicas WHERE epoch = $1`
	// Rows of replicas long dead are kept a while for the curious.
	sqlForgetReplicas = `DELETE FROM parley_replicas WHERE lease_until < now() - interval '1 hour'`
	sqlPutKey         = `INSERT INTO parley_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`
	sqlGetKey         = `SELECT value FROM parley_keys WHERE name = $1`
)

// sqlOrphans finds active tasks whose runner holds no lease; runner 0 is
// a process that never joined (a store opened without Join, an older
// Parley).
var sqlOrphans = `SELECT t.tenant, t.owner, t.id FROM tasks t WHERE t.state IN (` + sqlstore.StateList(order.Active) + `)
	AND NOT EXISTS (SELECT 1 FROM parley_replicas r WHERE r.epoch = t.runner AND r.lease_until > now())
	LIMIT 1000`

// Replica is a process's lease on a database that several processes
// share: while it holds, the Store's task writes carry its epoch (the
// fence) and record it as the runner of the tasks they write. Renew it
// well within its TTL; see Store.Join.
type Replica struct {
	s    *Store
	name string
	ttl  time.Duration
}

// Join registers the process as a replica named name (for people: a host
// name, a pod) with a lease of ttl, and makes the Store's task writes
// fenced by it. Call it once per Store.
func (s *Store) Join(ctx context.Context, name string, ttl time.Duration) (*Replica, error) {
	if ttl < 100*time.Millisecond {
		return nil, errors.New("pgstore: a replica lease must last at least 100ms")
	}
	r := &Replica{s: s, name: name, ttl: ttl}
	if err := r.join(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// join takes a new epoch.
func (r *Replica) join(ctx context.Context) error {
	var epoch int64
	if err := r.s.pool.QueryRow(ctx, sqlJoin, r.name, r.ttl.Milliseconds()).Scan(&epoch); err != nil {
		return wrap("join", err)
	}
	r.s.epoch.Store(epoch)
	return nil
}

// Epoch returns the replica's current epoch.
func (r *Replica) Epoch() int64 { return r.s.epoch.Load() }

// TTL returns the lease's duration.
func (r *Replica) TTL() time.Duration { return r.ttl }

// Renew extends the lease by its TTL from now. When the lease had already
// lapsed (the process was paused, or cut off from the database, for
// longer than the TTL), other replicas may have ended its tasks: Renew
// then joins again under a new epoch and reports lost, and the caller
// must give up the executions it was running, whose writes the old epoch
// can no longer make.
func (r *Replica) Renew(ctx context.Context) (lost bool, err error) {
	epoch := r.s.epoch.Load()
	if epoch == leftEpoch {
		return false, errors.New("pgstore: the replica left")
	}
	n, err := affected(r.s.pool.Exec(ctx, sqlRenew, epoch, r.ttl.Milliseconds()))
	if err != nil {
		return false, wrap("renew lease", err)
	}
	if n == 1 {
		return false, nil
	}
	return true, r.join(ctx)
}

// Orphans returns (up to 1000 of) the tasks, in every scope, that are
// SUBMITTED or WORKING while their runner holds no lease: their
// execution died with its replica. It also forgets replicas dead for an
// hour.
func (r *Replica) Orphans(ctx context.Context) ([]taskstore.ScopedTask, error) {
	if _, err := r.s.pool.Exec(ctx, sqlForgetReplicas); err != nil {
		return nil, wrap("forget replicas", err)
	}
	return r.s.listScoped(ctx, sqlOrphans)
}

// ClaimMessage takes over a message its recording replica left without a
// task (Store.ClaimMessage).
func (r *Replica) ClaimMessage(ctx context.Context, sc taskstore.Scope, messageID string) (bool, error) {
	return r.s.ClaimMessage(ctx, sc, messageID)
}

// Leave ends the lease (at shutdown): the replica's remaining active
// tasks become orphans at once, and the Store's task writes are refused
// from now on.
func (r *Replica) Leave(ctx context.Context) error {
	epoch := r.s.epoch.Swap(leftEpoch)
	if _, err := r.s.pool.Exec(ctx, sqlLeave, epoch); err != nil {
		return wrap("leave", err)
	}
	return nil
}

// fenceError returns ErrFenced (marked as a failure that passes: another
// replica may serve the call) when a write with the fence epoch matched
// nothing because the lease does not hold, and otherwise.
func fenceError(ctx context.Context, tx querier, epoch int64, otherwise error) error {
	if epoch == 0 {
		return otherwise
	}
	var holds bool
	if err := tx.QueryRow(ctx, sqlLeaseHolds, epoch).Scan(&holds); err != nil {
		return err
	}
	if !holds {
		return dialect.Unavailable(taskstore.ErrFenced)
	}
	return otherwise
}

// SharedKey returns the secret named name that every process on the
// database shares, made of size random bytes by the first that asks
// (ListTasks cursor keys, for one). Whoever can read the database can
// read it.
func (s *Store) SharedKey(ctx context.Context, name string, size int) ([]byte, error) {
	key := make([]byte, size)
	rand.Read(key)
	if _, err := s.pool.Exec(ctx, sqlPutKey, name, key); err != nil {
		return nil, wrap("shared key", err)
	}
	var got []byte
	if err := s.pool.QueryRow(ctx, sqlGetKey, name).Scan(&got); err != nil {
		return nil, wrap("shared key", err)
	}
	return got, nil
}
