package inventory_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

func poolInput(itemID, quantity int64) inventory.PoolInput {
	now := time.Now()
	return inventory.PoolInput{ItemID: itemID, Name: "秒杀", Price: 990, Quantity: quantity, PerBuyerLimit: 2,
		StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)}
}

// poolRows is the ledger of one pool and its balance.
func poolRows(t *testing.T, db *store.DB, poolID int64) (rows []*ent.StockLog, sum int64) {
	t.Helper()
	rows = db.Client.StockLog.Query().Where(stocklog.PoolID(poolID)).Order(ent.Asc(stocklog.FieldID)).AllX(context.Background())
	for _, r := range rows {
		sum += r.ChangeNum
	}
	return rows, sum
}

// mainSum is the balance of a SKU's main-stock ledger rows (pool id 0).
func mainSum(t *testing.T, db *store.DB, itemID int64) int64 {
	t.Helper()
	var sum int64
	for _, r := range db.Client.StockLog.Query().Where(stocklog.ItemID(itemID), stocklog.PoolID(0)).AllX(context.Background()) {
		sum += r.ChangeNum
	}
	return sum
}

// Creating a pool moves its quantity out of available main stock by one
// CAS, with one change-type-7 row on main stock and one on the pool under
// the same business key; a short main stock (units locked by unpaid orders
// are not available) writes nothing.
func TestMoveToPool(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		if _, err := db.SQL.Exec("UPDATE sku SET lock_stock = 2 WHERE id = ?", s.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := inv.MoveToPool(ctx, poolInput(s.ID, 9)); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("a pool of 9 from 8 available (10 on hand, 2 locked): %v, want OUT_OF_STOCK", err)
		}
		if n := db.Client.StockPool.Query().CountX(ctx); n != 0 {
			t.Errorf("%d pools after a refused create, want 0", n)
		}
		p, err := inv.MoveToPool(ctx, poolInput(s.ID, 8))
		if err != nil {
			t.Fatalf("a pool of the 8 available: %v", err)
		}
		if p.Stock != 8 || p.Quantity != 8 || p.Sold != 0 || p.Price != 990 || p.PerBuyerLimit != 2 || p.Status() != enums.PoolActive || p.GoodsID != s.GoodsID {
			t.Errorf("pool %+v, want stock 8 of 8, none sold, 9.90, limit 2, ACTIVE", p)
		}
		after := db.Client.Sku.GetX(ctx, s.ID)
		if after.Stock != 2 || after.LockStock != 2 || after.StockVersion != s.StockVersion+1 || after.Version != s.Version {
			t.Errorf("SKU after the move: stock %d, locked %d, stock version %d, version %d; want 2, 2, %d, %d", after.Stock, after.LockStock, after.StockVersion, after.Version, s.StockVersion+1, s.Version)
		}
		rows, sum := ledger(t, db, s.ID)
		if len(rows) != 3 {
			t.Fatalf("%d ledger rows on the SKU, want 3 (opening, to pool on main, to pool on the pool)", len(rows))
		}
		main, pool := rows[1], rows[2]
		if main.ChangeType != 7 || main.ChangeNum != -8 || main.BeforeStock != 10 || main.AfterStock != 2 || main.PoolID != 0 ||
			main.BizType != "pool" || main.BizSn != itoa(p.ID) {
			t.Errorf("main-stock row %+v, want type 7, -8, 10 → 2, pool 0, pool/%d", main, p.ID)
		}
		if pool.ChangeType != 7 || pool.ChangeNum != 8 || pool.BeforeStock != 0 || pool.AfterStock != 8 || pool.PoolID != p.ID ||
			pool.BizType != "pool" || pool.BizSn != itoa(p.ID) {
			t.Errorf("pool row %+v, want type 7, +8, 0 → 8, pool %d, pool/%d", pool, p.ID, p.ID)
		}
		if sum != 10 {
			t.Errorf("all rows of the SKU sum to %d, want the 10 it had (main + pools)", sum)
		}
		if got := mainSum(t, db, s.ID); got != after.Stock {
			t.Errorf("main-stock rows sum to %d, stock is %d", got, after.Stock)
		}
		if _, got := poolRows(t, db, p.ID); got != p.Stock {
			t.Errorf("pool rows sum to %d, pool stock is %d", got, p.Stock)
		}
		if _, err := db.SQL.Exec("UPDATE sku SET lock_stock = 0 WHERE id = ?", s.ID); err != nil {
			t.Fatal(err) // the planted lock belongs to no order
		}
		if diffs, err := inv.Reconcile(ctx, 100); err != nil || len(diffs) != 0 {
			t.Errorf("Reconcile after a move to a pool: %+v, %v; want no difference", diffs, err)
		}
		if a, err := inv.ActivePool(ctx, s.ID, time.Now()); err != nil || a == nil || a.ID != p.ID {
			t.Errorf("ActivePool = %+v, %v; want pool %d", a, err, p.ID)
		}
		if a, err := inv.ActivePool(ctx, s.ID, p.EndsAt); err != nil || a != nil {
			t.Errorf("ActivePool at endsAt = %+v, %v; want none", a, err)
		}
	})
}

func TestMoveToPoolRefusesBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		for _, tc := range []struct {
			name string
			edit func(*inventory.PoolInput)
			want error
		}{
			{"price 0", func(in *inventory.PoolInput) { in.Price = 0 }, inventory.ErrInvalidInput},
			{"negative price", func(in *inventory.PoolInput) { in.Price = -1 }, inventory.ErrInvalidInput},
			{"quantity 0", func(in *inventory.PoolInput) { in.Quantity = 0 }, inventory.ErrInvalidInput},
			{"limit 0", func(in *inventory.PoolInput) { in.PerBuyerLimit = 0 }, inventory.ErrInvalidInput},
			{"startsAt = endsAt", func(in *inventory.PoolInput) { in.StartsAt = in.EndsAt }, inventory.ErrInvalidInput},
			{"startsAt after endsAt", func(in *inventory.PoolInput) { in.StartsAt = in.EndsAt.Add(time.Second) }, inventory.ErrInvalidInput},
			{"already ended", func(in *inventory.PoolInput) {
				in.StartsAt, in.EndsAt = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
			}, inventory.ErrInvalidInput},
			{"blank name", func(in *inventory.PoolInput) { in.Name = "  " }, inventory.ErrInvalidInput},
			{"unknown SKU", func(in *inventory.PoolInput) { in.ItemID = s.ID + 1000 }, inventory.ErrNotFound},
			{"more than on hand", func(in *inventory.PoolInput) { in.Quantity = 11 }, inventory.ErrOutOfStock},
		} {
			in := poolInput(s.ID, 5)
			tc.edit(&in)
			if _, err := inv.MoveToPool(ctx, in); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
		if n := db.Client.StockPool.Query().CountX(ctx); n != 0 {
			t.Errorf("%d pools after refused creates, want 0", n)
		}
		if got := db.Client.Sku.GetX(ctx, s.ID); got.Stock != 10 || got.Version != s.Version {
			t.Errorf("SKU after refused creates: stock %d, version %d; want 10, %d", got.Stock, got.Version, s.Version)
		}
	})
}

// returned is what came back from pool p: its main-stock and pool rows of
// change type 8.
func returned(t *testing.T, db *store.DB, p *inventory.Pool) (mainRows, poolRows []*ent.StockLog) {
	t.Helper()
	for _, r := range db.Client.StockLog.Query().Where(stocklog.ItemID(p.ItemID), stocklog.ChangeType(8)).AllX(context.Background()) {
		if r.PoolID == 0 {
			mainRows = append(mainRows, r)
		} else {
			poolRows = append(poolRows, r)
		}
	}
	return mainRows, poolRows
}

// Closers racing at a pool's end return its remainder once: one CAS on
// returned decides, the others change nothing.
func TestReturnEndedOnceWithClosersRacing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		p, err := inv.MoveToPool(ctx, poolInput(s.ID, 6))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := inv.ReturnEnded(ctx, time.Now()); err != nil || n != 0 {
			t.Fatalf("ReturnEnded before the end: %d, %v; want 0", n, err)
		}
		const closers = 8
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			mu    sync.Mutex
			total int
		)
		for range closers {
			wg.Go(func() {
				<-start
				n, err := inv.ReturnEnded(ctx, p.EndsAt)
				if err != nil {
					t.Errorf("ReturnEnded: %v", err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		if total != 1 {
			t.Errorf("%d closers reported a return, want exactly 1", total)
		}
		mainRows, poolRows := returned(t, db, p)
		if len(mainRows) != 1 || len(poolRows) != 1 || mainRows[0].ChangeNum != 6 || poolRows[0].ChangeNum != -6 ||
			mainRows[0].BeforeStock != 4 || mainRows[0].AfterStock != 10 || poolRows[0].BeforeStock != 6 || poolRows[0].AfterStock != 0 {
			t.Errorf("change-type-8 rows: main %+v, pool %+v; want one +6 (4 → 10) and one -6 (6 → 0)", mainRows, poolRows)
		}
		if got := db.Client.Sku.GetX(ctx, s.ID); got.Stock != 10 {
			t.Errorf("main stock %d after the return, want 10", got.Stock)
		}
		after, err := inv.Pool(ctx, p.ID)
		if err != nil || after.Stock != 0 || !after.Returned || after.Sold != 0 || after.StatusAt(p.EndsAt) != enums.PoolEnded {
			t.Errorf("pool after the return: %+v, %v; want stock 0, returned, none sold, ENDED", after, err)
		}
		if _, sum := poolRowsOf(t, db, p.ID); sum != 0 {
			t.Errorf("pool rows sum to %d after the return, want 0", sum)
		}
		if diffs, err := inv.Reconcile(ctx, 100); err != nil || len(diffs) != 0 {
			t.Errorf("Reconcile after the return: %+v, %v", diffs, err)
		}
		if n, err := inv.ReturnEnded(ctx, p.EndsAt.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("ReturnEnded again: %d, %v; want 0", n, err)
		}
	})
}

func poolRowsOf(t *testing.T, db *store.DB, id int64) ([]*ent.StockLog, int64) {
	return poolRows(t, db, id)
}

// closeStockPool ends a pool at once and returns its remainder in the same
// transaction; closing it again, or closers racing, return nothing more.
func TestClosePool(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		p, err := inv.MoveToPool(ctx, poolInput(s.ID, 7))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				<-start
				got, err := inv.ClosePool(ctx, p.ID)
				if err != nil || got.ClosedAt == nil || !got.Returned || got.Stock != 0 || got.Status() != enums.PoolEnded {
					t.Errorf("ClosePool = %+v, %v; want closed, returned, stock 0, ENDED", got, err)
				}
			})
		}
		close(start)
		wg.Wait()
		mainRows, poolRows := returned(t, db, p)
		if len(mainRows) != 1 || len(poolRows) != 1 || mainRows[0].ChangeNum != 7 {
			t.Errorf("change-type-8 rows after 4 closes: main %+v, pool %+v; want one pair of 7", mainRows, poolRows)
		}
		if got := db.Client.Sku.GetX(ctx, s.ID); got.Stock != 10 {
			t.Errorf("main stock %d after the close, want 10", got.Stock)
		}
		if a, err := inv.ActivePool(ctx, s.ID, time.Now()); err != nil || a != nil {
			t.Errorf("ActivePool after the close = %+v, %v; want none", a, err)
		}
		if _, err := inv.ClosePool(ctx, p.ID+1000); !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("closing an unknown pool: %v, want NOT_FOUND", err)
		}
		if diffs, err := inv.Reconcile(ctx, 100); err != nil || len(diffs) != 0 {
			t.Errorf("Reconcile after the close: %+v, %v", diffs, err)
		}
	})
}

func TestPoolStatus(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(time.Hour)
	closed := start.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		closed *time.Time
		at     time.Time
		want   enums.StockPoolStatus
	}{
		{"before start", nil, start.Add(-time.Nanosecond), enums.PoolScheduled},
		{"at start", nil, start, enums.PoolActive},
		{"just before end", nil, end.Add(-time.Nanosecond), enums.PoolActive},
		{"at end", nil, end, enums.PoolEnded},
		{"closed, in the window", &closed, start.Add(2 * time.Minute), enums.PoolEnded},
		{"closed before start", &closed, start.Add(-time.Hour), enums.PoolEnded},
	} {
		p := inventory.Pool{StartsAt: start, EndsAt: end, ClosedAt: tc.closed}
		if got := p.StatusAt(tc.at); got != tc.want {
			t.Errorf("%s: StatusAt = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
