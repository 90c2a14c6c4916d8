package inventory

import (
	"time"

	"storefront/ent"
	"storefront/ent/poolbuyer"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// WritePoolTakesPostgres renders, into the group-commit batch's query on
// PostgreSQL, the movements of pool p's orders (in booking order, buyers[i]
// the buyer of moves[i]) sold on terms, as two statements, each its own
// guard (WriteTakesPostgres): the pool's CAS for their total, holding only
// while the goods and the SKU are still sold as read (plain reads: a pool
// sale takes no SKU row), with the ledger rows chained from the balance it
// returned (none when lock); then the buyers' counters, added in one upsert
// that returns them, and checked against the pool's limit. Two statements,
// not two WITH queries of one: the order of a statement's data-modifying
// WITH queries is the server's, and the lock order is the pool's row, then
// its buyers' counters.
func WritePoolTakesPostgres(q *store.Text, p *ent.StockPool, terms Terms, moves []Movement, buyers []string, lock bool, now time.Time) {
	total := totalOf(moves)
	goods := moves[0].GoodsID
	q.SQL("WITH p AS (")
	poolCAS(q, p, terms.Price, total, lock, now)
	q.SQL(" AND EXISTS (SELECT 1 FROM goods WHERE ")
	goodsOnSale(q, goods, terms, lock)
	// The SKU too: a pool batch may decide from lastRead's memory of it,
	// which only this check clears once an admin disables the SKU or
	// renames its spec values.
	q.SQL(") AND EXISTS (SELECT 1 FROM sku WHERE id = ")
	q.Int(p.ItemID)
	q.SQL(" AND goods_id = ")
	q.Int(goods)
	q.SQL(" AND status = ")
	q.Str(string(enums.SkuEnabled))
	q.SQL(" AND spec_value_str = ")
	q.Str(terms.SpecText)
	q.SQL(") RETURNING stock)")
	if !lock {
		chainPostgres(q, "p", moves, total)
	}
	q.SQL(" SELECT 1 / COUNT(*) FROM p; ")

	order, sum := claims(moves, buyers)
	q.SQL("WITH b AS (")
	q.Insert(poolbuyer.Table, len(order), func(j int, v store.Values) { buyerRow(v, p.ID, order[j], sum[order[j]]) })
	// The table's name qualifies units: unqualified it is ambiguous beside
	// EXCLUDED's.
	q.SQL(" ON CONFLICT (pool_id, user_id) DO UPDATE SET units = pool_buyer.units + EXCLUDED.units RETURNING units)")
	q.SQL(" SELECT 1 / (COUNT(*) = 0)::int FROM b WHERE units > ")
	q.Int(p.PerBuyerLimit)
	q.SQL("; ")
}
