package cart

import (
	"context"
	"maps"
	"sync"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Changes of one cart queue on its row instead of losing each other's
// lines: 20 concurrent adds of one unit make a quantity of 20.
func TestConcurrentAddsAllCount(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		x, y := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M")
		c := f.ok(f.svc.Create(ctx, "", nil))
		const n = 20
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := x
				if i%2 == 1 {
					id = y // half of them insert the same new line at once
				}
				_, errs[i] = f.svc.AddLines(ctx, "", c.ID, []LineInput{item(id, 1)})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("add %d: %v", i, err)
			}
		}
		if got := quantities(f.read(t, "", c.ID)); !maps.Equal(got, map[int64]int64{x: n / 2, y: n / 2}) {
			t.Fatalf("after %d concurrent adds: %v", n, got)
		}
	})
}

// Two sign-ins of one customer at once, each with its own visitor cart:
// the customer ends with one open cart holding both carts' lines.
func TestConcurrentAttachesMerge(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		x, y := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M")
		a := f.ok(f.svc.Create(ctx, "", []LineInput{item(x, 1)}))
		b := f.ok(f.svc.Create(ctx, "", []LineInput{item(y, 2)}))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tok := range []string{a.ID, b.ID} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.svc.Attach(ctx, "alice", tok)
			}()
		}
		wg.Wait()
		var open []*Cart
		for i, tok := range []string{a.ID, b.ID} {
			if errs[i] != nil {
				t.Fatalf("attach %d: %v", i, errs[i])
			}
			if c := f.read(t, "alice", tok); c != nil {
				open = append(open, c)
			}
		}
		if len(open) != 1 {
			t.Fatalf("%d of the two carts left, want 1", len(open))
		}
		if got := quantities(open[0]); !maps.Equal(got, map[int64]int64{x: 1, y: 2}) {
			t.Fatalf("merged %v", got)
		}
	})
}
