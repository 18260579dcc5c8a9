package telemetry_test

import (
	"context"
	"path/filepath"
	"testing"

	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/sqlitestore"
	"parley.dev/parley/taskstore/storetest"
	"parley.dev/parley/telemetry"
)

// TestStoreWrapperConformance: the telemetry store wrapper over each
// store passes the store suite the bare store passes, so wrapping changes
// what is measured and nothing else. PostgreSQL runs when the tests have
// a server (always in CI).
func TestStoreWrapperConformance(t *testing.T) {
	tel, err := telemetry.New(context.Background(), &telemetry.Options{Prometheus: true, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	t.Run("memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) taskstore.Store { return tel.Store(memstore.New()) })
	})
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) taskstore.Store {
			s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "tasks.db"))
			if err != nil {
				t.Fatal(err)
			}
			return tel.Store(s)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db := pgtest.NewDatabase(t)
		storetest.Run(t, func(t *testing.T) taskstore.Store {
			s, err := pgstore.Open(t.Context(), pgtest.NewSchema(t, db), nil)
			if err != nil {
				t.Fatal(err)
			}
			return tel.Store(s)
		})
	})
}
