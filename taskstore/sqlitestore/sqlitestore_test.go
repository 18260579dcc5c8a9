package sqlitestore

import (
	"path/filepath"
	"testing"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/storetest"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store { return openTemp(t) })
}
