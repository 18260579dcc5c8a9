package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/seal"
)

// isPostgres reports whether a --store value names a PostgreSQL database.
func isPostgres(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// storeLabel is a --store value fit for logs: a URL's password is
// replaced by xxxxx.
func storeLabel(spec string) string {
	if !isPostgres(spec) {
		return spec
	}
	u, err := url.Parse(spec)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// openPostgres opens the PostgreSQL store at the URL (migrating its
// schema) with opts (the push keys, nil for none, and the timeout of its
// calls) and brings every stored configuration under the first key. The
// URL's syntax was checked by storeFlags.check.
func openPostgres(ctx context.Context, spec string, opts *pgstore.Options, from string, pushOn bool, log *slog.Logger) (taskstore.Store, error) {
	// Not Exclusive: any number of servers share the database as
	// replicas (servecluster.go, docs/replicas.md).
	s, err := pgstore.Open(ctx, spec, opts)
	switch {
	case errors.Is(err, pgstore.ErrNoPushKey) || errors.Is(err, seal.ErrUnknownKey):
		return nil, fmt.Errorf("%w\n(give the key the credentials were encrypted with, after any new key, with --push-key-file FILE or %s)", err, pushKeyEnv)
	case errors.Is(err, pgstore.ErrNewerSchema) || errors.Is(err, pgstore.ErrInUse):
		return nil, fmt.Errorf("--store %s: %w", storeLabel(spec), err)
	case err != nil:
		// pgx's errors name the host and user, never the password.
		return nil, fmt.Errorf("--store %s: %w", storeLabel(spec), err)
	}
	return sealStored(ctx, s, opts.PushKeys, from, pushOn, log, "store", storeLabel(spec))
}
