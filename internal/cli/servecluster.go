package cli

// `parley serve --store postgres://…` runs as one replica of any number
// on the database (docs/replicas.md).

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore"
)

// replica is this process's membership of the replicas on a PostgreSQL
// database: its lease, the LISTEN/NOTIFY bus and the keys they share.
type replica struct {
	store     *pgstore.Store
	lease     *pgstore.Replica
	bus       *pgstore.Bus
	cursorKey []byte
	log       *slog.Logger
}

// joinReplicas makes the process a replica when the store is PostgreSQL
// (nil otherwise): it takes a lease of ttl, listens on the bus and reads
// the ListTasks cursor key every replica shares (made by the first).
func joinReplicas(ctx context.Context, store taskstore.Store, ttl time.Duration, log *slog.Logger) (*replica, error) {
	pg, ok := store.(*pgstore.Store)
	if !ok {
		return nil, nil
	}
	key, err := pg.SharedKey(ctx, "list-cursor", 32)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	lease, err := pg.Join(ctx, fmt.Sprintf("%s/%d", host, os.Getpid()), ttl)
	if err != nil {
		return nil, err
	}
	bus, err := pgstore.NewBus(ctx, pg.Pool(), "")
	if err != nil {
		lease.Leave(ctx)
		return nil, err
	}
	log.Info("replica: joined the replicas on the database", "epoch", lease.Epoch(), "lease", ttl)
	return &replica{store: pg, lease: lease, bus: bus, cursorKey: key, log: log}, nil
}

// cluster is the server's Options.Cluster (nil without replicas).
func (r *replica) cluster() *server.Cluster {
	if r == nil {
		return nil
	}
	return &server.Cluster{Bus: r.bus, Leases: r.lease, Poll: time.Second}
}

// pushOptions makes the push sender claim outbox rows, for a POST's
// timeout plus the lease, and rescan the outbox as often as the lease,
// so that the rows of a replica that died go to another soon after its
// claims lapse.
func (r *replica) pushOptions(p *pushFlags) {
	if r == nil {
		return
	}
	p.opts.Claims = r.store
	p.opts.ClaimLease = *p.timeout + r.lease.TTL()
	p.opts.Rescan = r.lease.TTL()
}

// leave ends the lease and the bus; call it after the server closed.
func (r *replica) leave() {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.lease.Leave(ctx); err != nil {
		r.log.Warn("replica: leaving failed; the other replicas will notice the lapsed lease", "err", err)
	}
	r.bus.Close()
}
