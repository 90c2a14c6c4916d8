package inventory

import (
	"time"

	"storefront/ent"
	"storefront/ent/poolbuyer"
	"storefront/ent/stocklog"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// WritePoolTakes renders, into the group-commit batch's statement on MySQL,
// the movements of pool p's orders (in booking order, buyers[i] the buyer
// of moves[i]) sold at price: the locked read of the pool's balance into
// @s, one ledger row each chained from it (none when lock), one CAS for
// their total, then the buyers' counters, added in one upsert and checked
// against the limit. It returns how many checks it added to @c, for the
// batch's guard before COMMIT.
func WritePoolTakes(q *store.Text, p *ent.StockPool, terms Terms, moves []Movement, buyers []string, lock bool, now time.Time) int {
	var total int64
	for _, m := range moves {
		total -= m.Num
	}
	q.SQL("SELECT stock INTO @s FROM stock_pool WHERE id = ")
	q.Int(p.ID)
	q.SQL(" FOR UPDATE; ")
	if !lock {
		var taken int64
		q.Insert(stocklog.Table, len(moves), func(j int, v store.Values) {
			m := &moves[j]
			m.write(v, "@s - "+itoa(taken), "@s - "+itoa(taken-m.Num))
			taken -= m.Num
		})
		q.SQL("; ")
	}
	writeGoodsCheck(q, moves[0].GoodsID, terms, lock)
	// The SKU too (a plain read: its row is not locked): a pool batch may
	// decide from lastRead's memory of it, which only this check clears
	// once an admin disables the SKU or renames its spec values.
	q.SQL("SET @k := (SELECT 1 FROM sku WHERE id = ")
	q.Int(p.ItemID)
	q.SQL(" AND goods_id = ")
	q.Int(moves[0].GoodsID)
	q.SQL(" AND status = ")
	q.Str(string(enums.SkuEnabled))
	q.SQL(" AND spec_value_str = ")
	q.Str(terms.SpecText)
	q.SQL("); ")
	poolCAS(q, p, terms.Price, total, lock, now)
	q.SQL(" AND @g AND @k; SET @c := @c + ROW_COUNT(); ")
	order, sum := claims(moves, buyers)
	q.Insert(poolbuyer.Table, len(order), func(j int, v store.Values) { buyerRow(v, p.ID, order[j], sum[order[j]]) })
	q.SQL(" ON DUPLICATE KEY UPDATE units = units + VALUES(units); ")
	q.SQL("SET @c := @c + (SELECT COUNT(*) = 0 FROM pool_buyer WHERE pool_id = ")
	q.Int(p.ID)
	q.SQL(" AND units > ")
	q.Int(p.PerBuyerLimit)
	q.SQL(" AND user_id IN (")
	for j, b := range order {
		if j > 0 {
			q.SQL(", ")
		}
		q.Str(b)
	}
	q.SQL(")); ")
	return 2
}
