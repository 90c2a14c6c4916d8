package inventory

import (
	"storefront/ent/stocklog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// WriteTakesPostgres renders, into the group-commit batch's query on
// PostgreSQL, the movements of one SKU (in booking order) sold on terms, as
// one statement: the CAS for their total (skuCAS, holding only on the terms
// read) returns the row it moved, and the ledger rows, one each, are chained
// from that balance in the same statement. The listing's flip, if the SKU
// was emptied, is WriteEmptiedPostgres's.
//
// The statement is also the batch's guard: SELECT 1 / COUNT(*) FROM the
// CAS's row divides by zero when the CAS did not hold (SQLSTATE 22012,
// which nothing else of the batch raises), the server skips every statement after it, COMMIT
// included, and the transaction is rolled back. Plain SQL has no RAISE
// outside a function; a division by a count is not a constant the planner
// could fold in advance.
//
// With lock (lock-at-order goods) the CAS raises lock_stock instead and no
// ledger row is booked: stock did not move.
func WriteTakesPostgres(q *store.Text, terms Terms, moves []Movement, lock bool) {
	id, goods := moves[0].ItemID, moves[0].GoodsID
	total := totalOf(moves)
	q.SQL("WITH s AS (")
	skuCAS{id: id, n: total, floor: total, lock: lock, goods: goods, terms: &terms}.write(q)
	q.SQL(" RETURNING stock)")
	if !lock {
		chainPostgres(q, "s", moves, total)
	}
	q.SQL(" SELECT 1 / COUNT(*) FROM s; ")
}

// WriteEmptiedPostgres renders, after every SKU and pool statement of the
// batch (listing rows come last in the lock order, internal/inventory/goods_lock.go),
// the listing's flip for the SKU that moves (WriteTakesPostgres's) took
// from, should it have been emptied: a statement of its own, since the
// siblings of a data-modifying WITH query see the snapshot from before it,
// not the row it wrote.
func WriteEmptiedPostgres(q *store.Text, moves []Movement) {
	listing.WriteEmptiedPostgres(q, moves[0].GoodsID, moves[0].ItemID)
}

// chainPostgres renders, as a WITH query (", l AS (…)") of the statement
// whose query from returned stock, the balance after a CAS that took total,
// the ledger rows of moves chained from it: each row's before and after as
// if they were applied one after another from stock + total, the balance
// the CAS found under the row lock. No row is written when the CAS did not
// hold (from is then empty).
func chainPostgres(q *store.Text, from string, moves []Movement, total int64) {
	q.SQL(", l AS (")
	left := total // what the movements from j on take
	q.InsertSelect(stocklog.Table, len(moves), from, func(j int, v store.Values) {
		m := &moves[j]
		// left and left + m.Num are never negative: no "- -", which SQL
		// reads as a comment.
		m.write(v, from+".stock + "+itoa(left), from+".stock + "+itoa(left+m.Num))
		left += m.Num
	})
	q.SQL(")")
}

// totalOf is the units moves take (their Num are negative).
func totalOf(moves []Movement) int64 {
	var total int64
	for _, m := range moves {
		total -= m.Num
	}
	return total
}
