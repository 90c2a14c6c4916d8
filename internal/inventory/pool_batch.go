package inventory

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"storefront/ent"
	"storefront/ent/poolbuyer"
	"storefront/ent/stockpool"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/money"
)

// Pool sales in checkout's group-commit batch: the batch reads the pools
// its orders name, and what their buyers hold of them, with its SKUs
// (ReadPoolState); decides every order from that; then per pool takes the
// total of its orders by one CAS on the pool's row, books one ledger row
// per order chained from the balance read under the lock, and adds each
// buyer's units to their counter. The SKU's own row is never touched.
//
// Lock order, on every path: SKU rows ascending, then pool rows ascending,
// each pool's buyer counters right after its row.

// PoolBuyer names one buyer's counter of one pool.
type PoolBuyer struct {
	PoolID int64
	Buyer  string
}

// Querier reads: a transaction, or the MySQL batch's own connection.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// poolColumns are what a sale needs of a pool row, in scan order.
var poolColumns = strings.Join([]string{stockpool.FieldID, stockpool.FieldItemID, stockpool.FieldGoodsID,
	stockpool.FieldName, stockpool.FieldPrice, stockpool.FieldStock, stockpool.FieldLockStock,
	stockpool.FieldPerBuyerLimit, stockpool.FieldStartsAt, stockpool.FieldEndsAt, stockpool.FieldClosedAt,
	stockpool.FieldReturned}, ", ")

// ReadPoolState reads the pools ids and the units buyers hold of them
// through q (plain reads: the plain path's CAS and a batch's check under
// the lock decide). Resolving an order asks for no buyers.
func ReadPoolState(ctx context.Context, q Querier, ids []int64, buyers []PoolBuyer) (map[int64]*ent.StockPool, map[PoolBuyer]int64, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	pools := make(map[int64]*ent.StockPool, len(ids))
	args := anyIDs(ids)
	rs, err := q.QueryContext(ctx, "SELECT "+poolColumns+" FROM "+stockpool.Table+" WHERE id IN ("+store.Marks(len(ids))+")", args...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading pools: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		p := &ent.StockPool{}
		var closed sql.NullTime
		if err := rs.Scan(&p.ID, &p.ItemID, &p.GoodsID, &p.Name, &p.Price, &p.Stock, &p.LockStock,
			&p.PerBuyerLimit, &p.StartsAt, &p.EndsAt, &closed, &p.Returned); err != nil {
			return nil, nil, fmt.Errorf("reading pools: %w", err)
		}
		if closed.Valid {
			p.ClosedAt = &closed.Time
		}
		pools[p.ID] = p
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading pools: %w", err)
	}
	units := make(map[PoolBuyer]int64, len(buyers))
	if len(buyers) == 0 {
		return pools, units, nil
	}
	var where strings.Builder
	args = args[:0]
	for i, b := range buyers {
		if i > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString("(pool_id = ? AND user_id = ?)")
		args = append(args, b.PoolID, b.Buyer)
	}
	rs2, err := q.QueryContext(ctx, "SELECT pool_id, user_id, units FROM "+poolbuyer.Table+" WHERE "+where.String(), args...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the buyers' units of pools: %w", err)
	}
	defer rs2.Close()
	for rs2.Next() {
		var b PoolBuyer
		var n int64
		if err := rs2.Scan(&b.PoolID, &b.Buyer, &n); err != nil {
			return nil, nil, fmt.Errorf("reading the buyers' units of pools: %w", err)
		}
		units[b] = n
	}
	return pools, units, rs2.Err()
}

// Available is what can be ordered from a pool: stock - lock_stock.
func Available(p *ent.StockPool) int64 { return p.Stock - p.LockStock }

// LimitExceeded is the error of an order that would take the buyer past
// the pool's per-buyer limit.
func LimitExceeded(poolID, n int64) error {
	return fmt.Errorf("%w: pool %d allows a buyer at most its limit, %d more is too many", ErrPoolLimitExceeded, poolID, n)
}

// poolCAS writes the CAS that takes n units of pool p for sales read at
// price: lock raises lock_stock (a lock-at-order goods), otherwise stock
// falls. It holds only while the pool sells at now at that price and has n
// available: the plain path and both batches write it here.
func poolCAS(w store.Statement, p *ent.StockPool, price money.Money, n int64, lock bool, now time.Time) {
	if lock {
		w.SQL("UPDATE stock_pool SET lock_stock = lock_stock + ")
	} else {
		w.SQL("UPDATE stock_pool SET stock = stock - ")
	}
	w.Int(n)
	w.SQL(", version = version + 1 WHERE id = ")
	w.Int(p.ID)
	w.SQL(" AND item_id = ")
	w.Int(p.ItemID)
	w.SQL(" AND price = ")
	w.Int(int64(price))
	w.SQL(" AND stock - lock_stock >= ")
	w.Int(n)
	w.SQL(" AND closed_at IS NULL AND (returned IS TRUE) = FALSE AND starts_at <= ") // IS TRUE: see returnedIs
	w.Time(nowArg(now))
	w.SQL(" AND ends_at > ")
	w.Time(nowArg(now))
}

// claims sums the units each buyer takes of a pool in moves (the buyers of
// the batch's orders of that pool), in ascending buyer order: the order in
// which their counters are locked.
func claims(moves []Movement, buyers []string) ([]string, map[string]int64) {
	sum := make(map[string]int64, len(buyers))
	for i, b := range buyers {
		sum[b] -= moves[i].Num
	}
	return slices.Sorted(maps.Keys(sum)), sum
}
