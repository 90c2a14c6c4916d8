package inventory

import (
	"storefront/ent/stocklog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// WriteTakes renders, into the group-commit batch's statement on MySQL, the
// movements of one SKU (in booking order) sold on terms: the locked read of
// its balance into @s, one ledger row each chained from it, and one CAS for
// their total (skuCAS) that holds only on the terms read and while its
// goods passed WriteGoodsLock's check, which the statement ran first; @c
// counts the CASes that held, for the batch's guard before COMMIT.
//
// With lock (lock-at-order goods) the CAS raises lock_stock instead and no
// ledger row is booked: stock did not move. Either way the CAS holds only
// while stock - lock_stock covers the total.
func WriteTakes(q *store.Text, terms Terms, moves []Movement, lock bool) {
	id, goods := moves[0].ItemID, moves[0].GoodsID
	q.SQL("SELECT stock, lock_stock INTO @s, @l FROM sku WHERE id = ")
	q.Int(id)
	q.SQL(" FOR UPDATE; ")
	var total int64
	if lock {
		for _, m := range moves {
			total -= m.Num
		}
	} else {
		q.Insert(stocklog.Table, len(moves), func(j int, v store.Values) {
			m := &moves[j]
			m.write(v, "@s - "+itoa(total), "@s - "+itoa(total-m.Num))
			total -= m.Num
		})
		q.SQL("; ")
	}
	skuCAS{id: id, n: total, floor: total, lock: lock, goods: goods, terms: &terms}.write(q)
	q.SQL(" AND " + goodsVar(goods) + "; SET @c := @c + ROW_COUNT(); ")
	listing.WriteEmptied(q, goods, func(q *store.Text) { q.SQL("@s - @l - " + itoa(total) + " <= 0") })
}

// goodsVar is the user variable WriteGoodsLock sets for goods.
func goodsVar(goods int64) string { return "@g" + itoa(goods) }

// WriteGoodsLock sets @g<goods id>, in the batch's statement, to whether
// the goods is still on shelf under the name and in the stock mode its
// sales were decided on, read under the shared goods lock (lockGoods): the
// batch's first lock, taken for each goods in ascending id before its
// inserts and SKU rows (goods_lock.go). COUNT(*) always yields a row, so
// the variable is 0 when the goods changed; the row is read by its id, so
// it is locked whatever it holds.
func WriteGoodsLock(q *store.Text, goods int64, terms Terms, lock bool) {
	q.SQL("SELECT COUNT(*) INTO " + goodsVar(goods) + " FROM goods WHERE id = ")
	q.Int(goods)
	q.SQL(" AND status = ")
	q.Str(string(enums.GoodsOnShelf))
	q.SQL(" AND name = ")
	q.Str(terms.GoodsName)
	q.SQL(" AND stock_mode = ")
	q.Str(string(modeOf(lock)))
	q.SQL(" " + ShareLockMySQL + "; ")
}

// writeGoodsCheck sets @g, in a pool batch's statement, to whether the
// goods is still on shelf under the name and in the stock mode its sales
// were decided on (a plain read: a pool sale takes no SKU row, so it needs
// no goods lock).
func writeGoodsCheck(q *store.Text, goods int64, terms Terms, lock bool) {
	q.SQL("SET @g := (SELECT 1 FROM goods WHERE id = ")
	q.Int(goods)
	q.SQL(" AND status = ")
	q.Str(string(enums.GoodsOnShelf))
	q.SQL(" AND name = ")
	q.Str(terms.GoodsName)
	q.SQL(" AND stock_mode = ")
	q.Str(string(modeOf(lock)))
	q.SQL("); ")
}

// The batch's statement on MySQL counts in @c the checks that held (each
// CAS of WriteTakes, two per pool of WritePoolTakes), and its guard before
// COMMIT compares the count with how many it wrote. The variables are
// inventory's: the batch (checkout) starts and reads them through these.

// WriteChecksReset writes the SET list's items that start the statement's
// variables ("SET " and any items of the caller's own around it).
func WriteChecksReset(q *store.Text) { q.SQL("@s := NULL, @c := 0") }

// WriteChecksHeld writes the expression of how many checks held.
func WriteChecksHeld(q *store.Text) { q.SQL("@c") }
