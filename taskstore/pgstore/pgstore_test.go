package pgstore

import (
	"testing"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore/pgtest"
	"parley.dev/parley/taskstore/storetest"
)

// openFresh opens a store on a new schema of db.
func openFresh(t testing.TB, db string, opts *Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), pgtest.NewSchema(t, db), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	db := pgtest.NewDatabase(t)
	storetest.Run(t, func(t *testing.T) taskstore.Store { return openFresh(t, db, nil) })
}
