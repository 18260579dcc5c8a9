package storetest_test

import (
	"testing"

	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/storetest"
)

// TestMyStore is how a store's own tests run the suite: open returns a
// fresh, empty store for each subtest (here the memory store stands in
// for yours).
func TestMyStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) taskstore.Store { return memstore.New() })
}

// Example shows the suite's entry point; see TestMyStore for it in a test.
func Example() {
	var open func(t *testing.T) taskstore.Store = func(t *testing.T) taskstore.Store { return memstore.New() }
	_ = func(t *testing.T) { storetest.Run(t, open) }
}
