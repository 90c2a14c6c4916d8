package inventory

import (
	"errors"
	"time"

	"storefront/ent"
	"storefront/ent/poolbuyer"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// A stock write is what one transaction must do to stock, said as typed
// values: the guards it holds only under (goods still on sale, a SKU still
// sold on the terms read, a pool still open, a counter still within its
// limit) and the takes it makes. Each dialect's engine renders the same
// values its own way (write_mysql.go: MariaDB's compound statement and
// MySQL's multi-statement query; write_postgres.go: data-modifying WITH
// queries; write_sqlite.go: statements under the database's one write lock;
// movement.go: the plain path's CASes), and a guard is defined once
// here, rendered by each; the row claims and counters of other tables are
// guard's, rendered by its renderer of the same server. Callers never see SQL text of stock or a
// variable of its statement.

// ErrMoved: a guard did not hold under the lock (stock taken meanwhile, the
// terms or the goods edited, a pool changed, a counter past its limit), and
// nothing of the transaction committed. The caller decides again from a
// fresh read.
var ErrMoved = errors.New("inventory: stock or terms moved between the read and the lock")

// StockWrite is the stock part of one transaction.
type StockWrite struct {
	// Goods are the guards "still on sale as read", one per goods of the
	// main-stock takes, ascending id: the transaction's first lock
	// (goods_lock.go).
	Goods []GoodsOnSale
	// Takes are one per source, SKUs ascending then pools ascending: the
	// lock order of every stock-moving transaction.
	Takes []Take
	// Claims take rows of their own (a customer's coupon) before any
	// source's row in the lock order.
	Claims []guard.RowClaim
	// Counters are guarded counters of their own (a source's ride on its
	// Take), after every source's row in the lock order.
	Counters []guard.Counter
	// At is when the takes happen (a pool sells only inside its window).
	At time.Time
}

// GoodsOnSale is the guard that a goods is on shelf under the name and in
// the stock mode its sales were decided on.
type GoodsOnSale struct {
	ID   int64
	Name string
	Lock bool // lock-at-order
	// Limit is the purchase limit read (nil: none): an order decided
	// without one must not be placed once one is set, uncounted.
	Limit *int64
}

// Take is the sales of one source (a SKU's main stock, or a pool), in
// booking order, on the terms they were decided on.
type Take struct {
	Terms Terms
	Lock  bool // lock-at-order: lock_stock rises, stock does not move
	Moves []Movement
	// Pool is the pool the moves take from, as read; nil takes the SKU's
	// main stock.
	Pool *ent.StockPool
	// Buyers[i] orders Moves[i]: a pool's per-buyer counter.
	Buyers []string
	// GoodsLimit is the goods' purchase limit as read (nil: none): part of
	// the goods guard.
	GoodsLimit *int64
}

// total is the units the take's moves take (their Num are negative).
func (t *Take) total() int64 { return totalOf(t.Moves) }

// PoolBuyers counts the units each buyer holds of a pool: its per-buyer
// limit.
var PoolBuyers = &guard.CounterKind{Table: poolbuyer.Table, Scope: poolbuyer.FieldPoolID, Holder: poolbuyer.FieldUserID,
	Units: poolbuyer.FieldUnits, Exceeded: ErrPoolLimitExceeded}

// counter is the guarded counter a pool take adds its buyers' units to.
func (t *Take) counter() guard.Counter {
	holders, sum := claims(t.Moves, t.Buyers)
	adds := make([]int64, len(holders))
	for i, h := range holders {
		adds[i] = sum[h]
	}
	return guard.Counter{Kind: PoolBuyers, Scope: t.Pool.ID, Holders: holders, Adds: adds, Limit: t.Pool.PerBuyerLimit}
}

// goodsOnSale is the one definition of the goods guard's condition on a
// goods row.
func goodsOnSale(w store.Statement, g GoodsOnSale) {
	w.SQL("id = ")
	w.Int(g.ID)
	w.SQL(" AND status = ")
	w.Str(string(enums.GoodsOnShelf))
	w.SQL(" AND name = ")
	w.Str(g.Name)
	w.SQL(" AND stock_mode = ")
	w.Str(string(modeOf(g.Lock)))
	if g.Limit == nil {
		w.SQL(" AND purchase_limit IS NULL")
	} else {
		w.SQL(" AND purchase_limit = ")
		w.Int(*g.Limit)
	}
}

// goodsRow is what the plain path read of a goods row under its lock.
type goodsRow struct {
	status, name, mode string
	limit              *int64
}

// heldBy is goodsOnSale's condition on a row read into Go (the plain path
// locks the rows by id, whatever they hold, and checks them here).
func (g GoodsOnSale) heldBy(r goodsRow) bool {
	sameLimit := (g.Limit == nil) == (r.limit == nil) && (g.Limit == nil || *g.Limit == *r.limit)
	return r.status == string(enums.GoodsOnShelf) && r.name == g.Name && r.mode == string(modeOf(g.Lock)) && sameLimit
}

// guardOf is the goods guard of a take.
func guardOf(t *Take) GoodsOnSale {
	return GoodsOnSale{ID: t.Moves[0].GoodsID, Name: t.Terms.GoodsName, Lock: t.Lock, Limit: t.GoodsLimit}
}

// skuSold is the one definition of the condition on a SKU row (found by
// its id) of being sold as read, apart from its price (a pool sells at its
// own): of its goods, enabled, under the spec text read. "+ 0" keeps
// MariaDB off the (goods_id, status) index, which it may pick over the
// primary key: a statement locking that index record before the row
// deadlocked with a batch holding the row
// (TestEditsBesideSalesDoNotDeadlock).
func skuSold(w store.Statement, goods int64, specText string) {
	w.SQL("goods_id + 0 = ")
	w.Int(goods)
	w.SQL(" AND status = ")
	w.Str(string(enums.SkuEnabled))
	w.SQL(" AND spec_value_str = ")
	w.Str(specText)
}

// totalOf is the units moves take (their Num are negative).
func totalOf(moves []Movement) int64 {
	var total int64
	for _, m := range moves {
		total -= m.Num
	}
	return total
}
