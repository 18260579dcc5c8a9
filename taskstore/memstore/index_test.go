package memstore

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"parley.dev/parley/taskstore/internal/order"
)

// TestIndexPosition: the galloping search finds what a bisection of the
// whole index finds, for keys present and absent, and inserts and removals
// keep the index sorted.
func TestIndexPosition(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var x index
	key := func() order.Key {
		return order.Key{MS: int64(rnd.IntN(50)), ID: strconv.Itoa(rnd.IntN(1000))}
	}
	byKey := func(e *entry, k order.Key) int { return -order.Compare(e.key, k) }
	for n := range 2000 {
		k := key()
		if _, found := x.position(k); !found {
			x.insert(&entry{key: k})
		}
		if !slices.IsSortedFunc(x, func(a, b *entry) int { return -order.Compare(a.key, b.key) }) {
			t.Fatalf("after %d inserts the index is not sorted", n)
		}
		for range 5 {
			k := key()
			if rnd.IntN(2) == 0 && len(x) > 0 {
				k = x[rnd.IntN(len(x))].key
			}
			p, found := x.position(k)
			wp, wfound := slices.BinarySearchFunc(x, k, byKey)
			if p != wp || found != wfound {
				t.Fatalf("position of %v in %d entries: %d, %v; bisection %d, %v", k, len(x), p, found, wp, wfound)
			}
		}
		if n%3 == 0 && len(x) > 0 {
			e := x[rnd.IntN(len(x))]
			x.remove(e)
			if _, found := x.position(e.key); found {
				t.Fatalf("removed %v is still found", e.key)
			}
		}
	}
}
