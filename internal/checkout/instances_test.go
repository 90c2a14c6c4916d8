package checkout

import (
	"context"
	"sync/atomic"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// instances opens a fresh database on b n times, as n servers of one shop:
// the fixture (seeded) on the first, and a Service of the fixture's
// configuration on each, each with its own pools and group path.
func instances(t *testing.T, b testdb.Backend, p path, n int) (*fixture, []*Service) {
	t.Helper()
	spec := testdb.Spec(t, b)
	open := func() *store.DB {
		db, err := store.Open(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := setup(t, db, p)
	svcs := []*Service{f.svc}
	for range n - 1 {
		s := New(open(), f.svc.cfg)
		s.loneOnPlain = f.svc.loneOnPlain
		svcs = append(svcs, s)
	}
	return f, svcs
}

// tally is what buyers got: orders, OUT_OF_STOCK, and anything else (the
// first of it kept).
type tally struct {
	ok, outOfStock, other atomic.Int64
	first                 atomic.Value
}

// sell runs n buyers, 64 at a time, each placing with place(i).
func sell(n int, place func(i int) error) *tally {
	var s tally
	race(n, 64, func(i int) {
		switch err := place(i); {
		case err == nil:
			s.ok.Add(1)
		case isAny(err, ErrOutOfStock):
			s.outOfStock.Add(1)
		default:
			s.other.Add(1)
			s.first.CompareAndSwap(nil, err)
		}
	})
	return &s
}
