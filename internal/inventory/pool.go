package inventory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/stockpool"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/limits"
	"storefront/internal/vocab/money"
	"storefront/internal/vocab/paging"
)

// Stock pools (seed 003, 5.5): a flash sale sells from its own row, so it
// never queues on the SKU's row lock. Units move in from main stock when the
// pool is created (change type 7, one row on main stock and one on the
// pool under the same business key "pool"/<pool id>) and what is left moves
// back once at the end (change type 8). A pool's stock is the sum of the
// ledger rows that carry its id, as main stock is the sum of those with
// pool id 0.

// Pool is a stock pool as clients see it; GraphQL's StockPool binds to it.
type Pool struct {
	ID, ItemID, GoodsID int64
	Name                string
	Price               money.Money
	Quantity            int64
	// Stock is on hand in the pool; LockedStock of it is held by unpaid
	// orders of a lock-at-order goods (and stays after the return until
	// they are paid or released).
	Stock, LockedStock int64
	// Sold is the units of the pool's orders that stand: sold and neither
	// cancelled, closed nor refunded, also when the restore went to main
	// stock after the pool's return (see views). Locked units are not sold
	// until paid.
	Sold          int64
	PerBuyerLimit int64
	StartsAt      time.Time
	EndsAt        time.Time
	ClosedAt      *time.Time
	Returned      bool
	Version       int64
	CreatedAt     time.Time
}

// StatusAt is the pool's status at now.
func (p *Pool) StatusAt(now time.Time) enums.StockPoolStatus {
	switch {
	case p.ClosedAt != nil || !now.Before(p.EndsAt):
		return enums.PoolEnded
	case now.Before(p.StartsAt):
		return enums.PoolScheduled
	}
	return enums.PoolActive
}

// AvailableStock is what can be ordered from the pool: stock - lockedStock.
func (p *Pool) AvailableStock() int64 { return p.Stock - p.LockedStock }

// Status is the pool's status now (GraphQL's StockPool.status).
func (p *Pool) Status() enums.StockPoolStatus { return p.StatusAt(time.Now()) }

// PoolInput creates a pool: Quantity units of ItemID's available main
// stock, sold at Price to at most PerBuyerLimit units a buyer in
// [StartsAt, EndsAt).
type PoolInput struct {
	ItemID        int64
	Name          string
	Price         money.Money
	Quantity      int64
	PerBuyerLimit int64
	StartsAt      time.Time
	EndsAt        time.Time
}

// dbTime is t as pool rows store and compare it: UTC whole seconds with no
// monotonic reading (a fraction given is dropped). SQLite (modernc) stores
// a time as its String(), which carries "m=+…" when there is a monotonic
// reading and would then compare as text above the same instant without
// one; MySQL's DATETIME keeps whole seconds.
func dbTime(t time.Time) time.Time { return t.Round(0).UTC().Truncate(time.Second) }

// nowArg is a clock reading as a query argument compared with pool times.
func nowArg(t time.Time) time.Time { return t.Round(0).UTC() }

// The times a pool may start and end in: each backend stores
// and reads back every second of it (SQLite as text, MySQL in DATETIME
// columns, 1000..9999). The lower bound is far enough from year 1 that no
// zero time slips in, and any real sale fits.
var (
	MinPoolTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxPoolTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

func (in *PoolInput) check(now time.Time) error {
	in.Name = strings.TrimSpace(in.Name)
	in.StartsAt, in.EndsAt = dbTime(in.StartsAt), dbTime(in.EndsAt)
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"startsAt", in.StartsAt}, {"endsAt", in.EndsAt}} {
		if t.at.Before(MinPoolTime) || t.at.After(MaxPoolTime) {
			return fmt.Errorf("%w: %s %s is outside %s..%s", ErrInvalidInput, t.name, t.at.Format(time.RFC3339),
				MinPoolTime.Format(time.RFC3339), MaxPoolTime.Format(time.RFC3339))
		}
	}
	switch {
	case in.Name == "" || len(in.Name) > 120:
		return fmt.Errorf("%w: a pool's name must be 1 to 120 bytes", ErrInvalidInput)
	case in.Price <= 0:
		return fmt.Errorf("%w: a pool's price must be above 0", ErrInvalidInput)
	case in.Quantity <= 0 || in.Quantity > limits.MaxStock:
		return fmt.Errorf("%w: quantity must be between 1 and %d", ErrInvalidInput, limits.MaxStock)
	case in.PerBuyerLimit <= 0 || in.PerBuyerLimit > limits.MaxStock:
		return fmt.Errorf("%w: perBuyerLimit must be between 1 and %d", ErrInvalidInput, limits.MaxStock)
	case !in.StartsAt.Before(in.EndsAt):
		return fmt.Errorf("%w: startsAt must be before endsAt", ErrInvalidInput)
	case !now.Before(in.EndsAt):
		return fmt.Errorf("%w: endsAt is already past", ErrInvalidInput)
	}
	return nil
}

// MoveToPool creates a pool and moves its quantity out of the SKU's main
// stock in one transaction: one CAS on available main stock (stock -
// lock_stock >= quantity, ErrOutOfStock otherwise: units locked by unpaid
// orders are theirs), then the ledger rows of change type 7, -quantity on
// main stock and +quantity on the pool.
func (s *Service) MoveToPool(ctx context.Context, in PoolInput) (*Pool, error) {
	now := time.Now()
	if err := in.check(now); err != nil {
		return nil, err
	}
	var id int64
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		// The goods row (move locks it), then the SKU row: the lock order of
		// every transaction that moves both a SKU and one of its pools is
		// goods, SKU, then pool.
		row, err := move(ctx, tx, in.ItemID, -in.Quantity, true)
		if err != nil {
			return err
		}
		p, err := tx.StockPool.Create().
			SetItemID(row.ID).SetGoodsID(row.GoodsID).SetName(in.Name).SetPrice(in.Price).
			SetQuantity(in.Quantity).SetStock(in.Quantity).SetPerBuyerLimit(in.PerBuyerLimit).
			SetStartsAt(in.StartsAt).SetEndsAt(in.EndsAt).SetCreatedAt(nowArg(now)).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("creating a pool on SKU %d: %w", in.ItemID, err)
		}
		id = p.ID
		sn := itoa(p.ID)
		if err := bookMoved(ctx, tx, &Movement{ItemID: row.ID, GoodsID: row.GoodsID, Num: -in.Quantity, Type: ToPool,
			BizType: BizPool, BizSn: sn, Remark: "moved to pool " + sn, At: now}); err != nil {
			return err
		}
		return Book(ctx, tx, Entry{ItemID: row.ID, GoodsID: row.GoodsID, Type: ToPool, Num: in.Quantity, Before: 0, After: in.Quantity,
			BizType: BizPool, BizSn: sn, Remark: "moved from main stock", PoolID: p.ID})
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.Pool(ctx, id)
}

// ClosePool ends a pool now (closeStockPool): closed_at is set once, and the
// remainder goes back to main stock in the same transaction. Closing a pool
// already closed or ended changes nothing but returns a remainder not yet
// returned.
func (s *Service) ClosePool(ctx context.Context, poolID int64) (*Pool, error) {
	now := time.Now()
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		if err := lockPoolGoods(ctx, tx, poolID); err != nil {
			return err
		}
		if _, err := tx.StockPool.Update().Where(stockpool.ID(poolID), stockpool.ClosedAtIsNil()).
			SetClosedAt(dbTime(now)).AddVersion(1).Save(ctx); err != nil {
			return fmt.Errorf("closing pool %d: %w", poolID, err)
		}
		_, err := returnPool(ctx, tx, poolID, now)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.Pool(ctx, poolID)
}

// ReturnEnded returns the remainder of every pool ended by now (past its
// endsAt, or closed) and not yet returned, each in its own transaction, and
// reports how many it returned. Closers may race: each pool returns once.
func (s *Service) ReturnEnded(ctx context.Context, now time.Time) (int, error) {
	ids, err := s.db.Client.StockPool.Query().
		Where(stockpool.Returned(false), stockpool.Or(stockpool.EndsAtLTE(nowArg(now)), stockpool.ClosedAtNotNil())).
		Order(stockpool.ByID()).Limit(1000).IDs(ctx)
	if err != nil {
		return 0, store.Classify(fmt.Errorf("listing ended pools: %w", err))
	}
	returned := 0
	for _, id := range ids {
		var done bool
		err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) (err error) {
			done, err = returnPool(ctx, tx, id, now)
			return err
		})
		if err != nil {
			return returned, store.Classify(err)
		}
		if done {
			returned++
		}
	}
	return returned, nil
}

// returnPool moves an ended pool's available remainder (stock -
// lock_stock) back to main stock (change type 8: -r on the pool, +r on main
// stock) and reports whether this call did it. It takes the goods lock
// first (lockPoolGoods), then the pool's row before the SKU's (why that
// cannot deadlock: the lock-order note above DeductPool). The CAS on
// returned decides among racing closers: the loser changes nothing. The
// winner's UPDATE holds the pool row, so the stock it then reads is the
// last one (no sale can commit in between).
func returnPool(ctx context.Context, tx *ent.Tx, id int64, now time.Time) (bool, error) {
	if err := lockPoolGoods(ctx, tx, id); err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, "UPDATE stock_pool SET returned = ?, version = version + 1 WHERE id = ? AND returned = ? AND (closed_at IS NOT NULL OR ends_at <= ?)",
		true, id, false, nowArg(now))
	if err != nil {
		return false, fmt.Errorf("returning pool %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 0 {
		if ok, err := tx.StockPool.Query().Where(stockpool.ID(id)).Exist(ctx); err != nil {
			return false, err
		} else if !ok {
			return false, fmt.Errorf("%w: stock pool %d", ErrNotFound, id)
		}
		return false, nil // returned already, or not ended
	}
	p, err := tx.StockPool.Get(ctx, id)
	if err != nil {
		return false, fmt.Errorf("returning pool %d: %w", id, err)
	}
	// Only the available remainder: units locked by unpaid orders stay in
	// the pool until paid (deducted from it) or released (then moved to
	// main stock by ReleasePool, change type 8 under the order's key).
	r := p.Stock - p.LockStock
	if r <= 0 {
		return true, nil // sold out, or all of it locked: nothing to move now
	}
	if res, err := tx.ExecContext(ctx, "UPDATE stock_pool SET stock = stock - ? WHERE id = ? AND stock - lock_stock = ?", r, id, r); err != nil {
		return false, fmt.Errorf("returning pool %d: %w", id, err)
	} else if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n != 1 {
		return false, fmt.Errorf("returning pool %d: its stock moved under the lock", id)
	}
	sn := itoa(id)
	if err := Book(ctx, tx, Entry{ItemID: p.ItemID, GoodsID: p.GoodsID, Type: FromPool, Num: -r, Before: p.Stock, After: p.Stock - r,
		BizType: BizPool, BizSn: sn, Remark: "returned to main stock", PoolID: id}); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + ?, stock_version = stock_version + 1 WHERE id = ?", r, p.ItemID); err != nil {
		return false, fmt.Errorf("returning pool %d to SKU %d: %w", id, p.ItemID, err)
	}
	if err := listing.Restocked(ctx, tx, []int64{p.GoodsID}, p.ItemID); err != nil {
		return false, err
	}
	return true, bookMoved(ctx, tx, &Movement{ItemID: p.ItemID, GoodsID: p.GoodsID, Num: r, Type: FromPool,
		BizType: BizPool, BizSn: sn, Remark: "returned from pool " + sn, At: now})
}

// Pool reads one pool.
func (s *Service) Pool(ctx context.Context, id int64) (*Pool, error) {
	p, err := s.db.Client.StockPool.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: stock pool %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading pool %d: %w", id, err))
	}
	out, err := s.views(ctx, []*ent.StockPool{p})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ActivePool is the SKU's pool on sale at now (the one ending first when
// several overlap), or nil.
func (s *Service) ActivePool(ctx context.Context, itemID int64, now time.Time) (*Pool, error) {
	now = nowArg(now)
	rows, err := s.db.Client.StockPool.Query().
		Where(stockpool.ItemID(itemID), stockpool.ClosedAtIsNil(), stockpool.Returned(false),
			stockpool.StartsAtLTE(now), stockpool.EndsAtGT(now)).
		Order(stockpool.ByEndsAt(), stockpool.ByID()).Limit(1).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the active pool of SKU %d: %w", itemID, err))
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out, err := s.views(ctx, rows)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ActivePools are the pools on sale at now of goodsID's SKUs, by SKU (for
// each, the one ending first when several overlap): one query for a whole
// product page, where Sku.activePool asked per SKU would be 500 for the
// demo shoe.
func (s *Service) ActivePools(ctx context.Context, goodsID int64, now time.Time) (map[int64]*Pool, error) {
	now = nowArg(now)
	rows, err := s.db.Client.StockPool.Query().
		Where(stockpool.GoodsID(goodsID), stockpool.ClosedAtIsNil(), stockpool.Returned(false),
			stockpool.StartsAtLTE(now), stockpool.EndsAtGT(now)).
		Order(stockpool.ByEndsAt(), stockpool.ByID()).Limit(maxActivePools).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the active pools of goods %d: %w", goodsID, err))
	}
	views, err := s.views(ctx, rows)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*Pool, len(views))
	for _, p := range views {
		if out[p.ItemID] == nil {
			out[p.ItemID] = p
		}
	}
	return out, nil
}

// maxActivePools bounds what ActivePools reads: a goods' SKUs
// (skumatrix.DefaultLimits.MaxSKUs) times a few overlapping pools each.
const maxActivePools = 2000

// PoolPage is one page of a SKU's pools, newest first.
type PoolPage struct {
	Pools       []*Pool
	HasNextPage bool
}

// Pools pages through a SKU's pools, newest first (by id, stable while new
// pools are created).
func (s *Service) Pools(ctx context.Context, itemID int64, first int, after string) (*PoolPage, error) {
	first, below, err := paging.Window(poolCursorKind, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	q := s.db.Client.StockPool.Query().Where(stockpool.ItemID(itemID))
	if below != 0 {
		q = q.Where(stockpool.IDLT(below))
	}
	rows, err := q.Order(stockpool.ByID(sql.OrderDesc())).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the pools of SKU %d: %w", itemID, err))
	}
	if len(rows) == 0 {
		if err := s.skuExists(ctx, itemID); err != nil {
			return nil, err
		}
	}
	p := &PoolPage{}
	rows, p.HasNextPage = paging.Trim(rows, first)
	if p.Pools, err = s.views(ctx, rows); err != nil {
		return nil, err
	}
	return p, nil
}

// LatestPools is how many of a SKU's newest pools Sku.pools shows (a
// product page's 500 SKUs times a page of 100 would be too much to build);
// stockPools pages through all of them.
const LatestPools = 10

// PoolCursor is the opaque connection cursor of a pool.
func PoolCursor(id int64) string { return paging.Cursor(poolCursorKind, id) }

const poolCursorKind = "stockpool"

// views turns rows into Pools. A pool not yet returned holds every unit
// that did not leave it for an order that stands (restores come back to
// it), so what it sold is quantity - stock. Once returned, a later cancel
// or refund of one of its orders restores to main stock instead, so the
// returned ones count what sold from the ledger (soldFromLedger).
func (s *Service) views(ctx context.Context, rows []*ent.StockPool) ([]*Pool, error) {
	var returned []*ent.StockPool
	for _, r := range rows {
		if r.Returned {
			returned = append(returned, r)
		}
	}
	sold, err := s.soldFromLedger(ctx, returned)
	if err != nil {
		return nil, err
	}
	out := make([]*Pool, len(rows))
	for i, r := range rows {
		n := r.Quantity - r.Stock
		if r.Returned {
			n = sold[r.ID]
		}
		out[i] = &Pool{
			ID: r.ID, ItemID: r.ItemID, GoodsID: r.GoodsID, Name: r.Name, Price: r.Price,
			Quantity: r.Quantity, Stock: r.Stock, LockedStock: r.LockStock, Sold: n, PerBuyerLimit: r.PerBuyerLimit,
			StartsAt: r.StartsAt, EndsAt: r.EndsAt, ClosedAt: r.ClosedAt, Returned: r.Returned, Version: r.Version, CreatedAt: r.CreatedAt,
		}
	}
	return out, nil
}

// soldFromLedger counts, per pool, the units of its sales that stand: each
// sale row on the pool (change type 1 at order, 2 at a lock-mode payment)
// less what that order restored of the SKU (change types 3 and 4, to the
// pool before its return or to main stock after it, under the order's key
// or one of its after-sales'; an order buys a SKU from one source, so its
// restores of the SKU are of this sale). Units locked and released are no
// sale at all (no row, or a change type 8). One query for all pools; uk_biz
// finds each order's restores.
func (s *Service) soldFromLedger(ctx context.Context, pools []*ent.StockPool) (map[int64]int64, error) {
	out := make(map[int64]int64, len(pools))
	if len(pools) == 0 {
		return out, nil
	}
	var in strings.Builder
	args := make([]any, 0, 2*len(pools)+8)
	args = append(args, BizOrder, int(CloseRestore), int(RefundRestore), BizAfterSale, int(RefundRestore))
	for i, p := range pools {
		if i > 0 {
			in.WriteString(" OR ")
		}
		in.WriteString("(s.item_id = ? AND s.pool_id = ?)") // the (item_id, created_at) index, not a scan
		args = append(args, p.ItemID, p.ID)
	}
	args = append(args, BizOrder, int(OrderDeduct), int(PaymentDeduct))
	q := `SELECT t.pool_id, SUM(t.sold) FROM (
  SELECT s.pool_id, -s.change_num - COALESCE((SELECT SUM(r.change_num) FROM stock_log r
    WHERE r.biz_type = ? AND r.biz_sn = s.biz_sn AND r.item_id = s.item_id AND r.change_type IN (?, ?)), 0)
  - COALESCE((SELECT SUM(r.change_num) FROM stock_log r JOIN after_sale a ON a.after_sale_sn = r.biz_sn JOIN orders o ON o.id = a.order_id
    WHERE o.order_sn = s.biz_sn AND r.biz_type = ? AND r.item_id = s.item_id AND r.change_type = ?), 0) AS sold
  FROM stock_log s WHERE (` + in.String() + `) AND s.biz_type = ? AND s.change_type IN (?, ?)
) t GROUP BY t.pool_id`
	rs, err := s.db.SQL.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("counting what pools sold: %w", err))
	}
	defer rs.Close()
	for rs.Next() {
		var id, n int64
		if err := rs.Scan(&id, &n); err != nil {
			return nil, store.Classify(fmt.Errorf("counting what pools sold: %w", err))
		}
		out[id] = n
	}
	return out, store.Classify(rs.Err())
}

// lockPoolGoods takes the goods lock (lockGoods) of pool id's goods, the
// first lock of a transaction that writes the pool's row: goods → SKU →
// pool (goods_lock.go). A pool's goods never changes, so a plain read of it
// is enough. Taken after the pool's row, as the return and the close once
// did, a close waiting for the goods behind a catalog edit held the pool
// row a sale of the goods waited for while the edit waited for that sale's
// SKU row (a three-way deadlock on MariaDB). A pool that does not exist
// locks nothing; the caller's own statements report it.
func lockPoolGoods(ctx context.Context, tx *ent.Tx, id int64) error {
	var rows []struct {
		GoodsID int64 `sql:"goods_id"`
	}
	if err := tx.StockPool.Query().Where(stockpool.ID(id)).Select(stockpool.FieldGoodsID).Scan(ctx, &rows); err != nil {
		return fmt.Errorf("reading the goods of pool %d: %w", id, err)
	}
	if len(rows) == 0 {
		return nil
	}
	return lockGoods(ctx, tx, rows[0].GoodsID)
}
