package live_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/live"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

type fixture struct {
	hub *live.Hub
	cat *catalog.Service
	inv *inventory.Service
	ids map[string]int64
	n   *atomic.Int64
}

func eachHub(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			n := new(atomic.Int64)
			db := testdb.Open(t, b, testdb.CountReads(n))
			cat := catalog.New(db, catalog.DefaultConfig())
			t.Cleanup(cat.Close)
			ids, err := demo.Seed(context.Background(), cat)
			if err != nil {
				t.Fatal(err)
			}
			hub := live.New(db, cat, live.Config{Interval: 20 * time.Millisecond})
			t.Cleanup(hub.Close)
			fn(t, &fixture{hub: hub, cat: cat, inv: inventory.New(db), ids: ids, n: n})
		})
	}
}

// next waits for the next view on ch.
func next(t *testing.T, ch <-chan *catalog.Goods) (*catalog.Goods, bool) {
	t.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10 s")
	}
	return nil, false
}

func bagStock(g *catalog.Goods) int64 { return g.EnabledSKUs()[0].AvailableStock() }

// The first message is the current state; a stock change is pushed; a
// subscriber that does not read gets the latest state, not a queue; a goods
// taken off shelf ends the subscription with NOT_FOUND; an off-shelf goods is
// refused; leaving unwatches.
func TestHubPushesChanges(t *testing.T) {
	eachHub(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		bag := f.ids[demo.BagCode]
		var ended atomic.Value
		ch, err := f.hub.Subscribe(ctx, catalog.Viewer{}, bag, func(err error) { ended.Store(err) })
		if err != nil {
			t.Fatal(err)
		}
		first, _ := next(t, ch)
		start := bagStock(first)
		sku := first.EnabledSKUs()[0].ID

		// Three changes while nobody reads: what waits is the latest state
		// (intermediate ones may have been taken), never an older one after it.
		for range 3 {
			if _, err := f.inv.Adjust(ctx, inventory.AdjustInput{ItemID: sku, Delta: -1, Reason: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		for {
			v, _ := next(t, ch)
			if got := bagStock(v); got == start-3 {
				break
			} else if got > start || got < start-3 {
				t.Fatalf("pushed stock %d, want between %d and %d", got, start-3, start)
			}
		}
		select {
		case v := <-ch:
			t.Fatalf("a message after the last state: stock %d", bagStock(v))
		default:
		}

		if _, err := f.cat.SetStatus(ctx, bag, enums.GoodsOffShelf); err != nil {
			t.Fatal(err)
		}
		for {
			if _, ok := next(t, ch); !ok {
				break
			}
		}
		if err, _ := ended.Load().(error); !errors.Is(err, errs.NotFound) {
			t.Fatalf("taken off shelf: ended with %v, want NOT_FOUND", err)
		}
		if _, err := f.hub.Subscribe(ctx, catalog.Viewer{}, bag, nil); !errors.Is(err, errs.NotFound) {
			t.Fatalf("subscribing to an off-shelf goods: %v, want NOT_FOUND", err)
		}
		if _, err := f.hub.Subscribe(ctx, catalog.Viewer{Admin: true}, bag, nil); err != nil {
			t.Fatalf("an admin subscribing to an off-shelf goods: %v", err)
		}
		cancel()
		wait.For(t, "no subscriber and no goods after every context ended", func() bool {
			s := f.hub.Stats()
			return s.Subscribers == 0 && s.Goods == 0
		})
	})
}

// However many subscribe to a goods, an unchanged goods costs one statement
// per interval; nobody watching costs none.
func TestHubReadsPerGoodsNotPerSubscriber(t *testing.T) {
	eachHub(t, func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range 100 {
			ch, err := f.hub.Subscribe(ctx, catalog.Viewer{}, f.ids[demo.TShirtCode], nil)
			if err != nil {
				t.Fatal(err)
			}
			next(t, ch)
		}
		waitPolls := func(k uint64) {
			t.Helper()
			p0 := f.hub.Stats().Polls
			wait.For(t, fmt.Sprintf("%d more polls", k), func() bool { return f.hub.Stats().Polls >= p0+k })
		}
		waitPolls(2) // the first poll of a new goods reads its view once more
		n0, p0 := f.n.Load(), f.hub.Stats().Polls
		waitPolls(20)
		n, p := f.n.Load()-n0, f.hub.Stats().Polls-p0
		if n > int64(p)+1 {
			t.Errorf("%d statements in %d polls with 100 subscribers of one unchanged goods, want one per poll", n, p)
		}
		cancel()
		wait.For(t, "the hub to forget the goods", func() bool { return f.hub.Stats().Goods == 0 })
		n0 = f.n.Load()
		time.Sleep(100 * time.Millisecond) // five intervals with nobody watching
		if n := f.n.Load() - n0; n != 0 {
			t.Errorf("%d statements with nobody watching, want 0", n)
		}
	})
}
