package listing

import "storefront/internal/platform/store"

// MySQL renders the listing's writes in the group-commit batch's one
// statement on MySQL and MariaDB (inventory.MySQLBatch).
type MySQL struct{}

// Emptied renders Emptied after the CAS that took from a SKU of goods;
// emptied writes the condition that the SKU has nothing left after it,
// from the batch's locked read (its writer's own variables: no variable's
// name is listing's to know). The condition comes first: a SKU that kept stock makes it false
// before any table is read, and the optimizer answers an impossible WHERE
// without reading or locking an index record, so such a batch pays one
// statement the server does not execute against a table. (A key like
// IF(emptied, goods, 0) instead ranged over the index and locked the record
// past it, which every batch in flight then queued on.)
//
// In a compound statement (MariaDB) the condition is a real IF, and a SKU
// that kept stock costs no statement at all: as an UPDATE with an impossible
// WHERE it still cost the server about a third more CPU an order on a batch
// over 16 SKUs (one such UPDATE per SKU; docs/benchmarks.md).
func (MySQL) Emptied(q *store.Text, goods int64, emptied func(q *store.Text)) {
	if q.Compound {
		q.SQL("IF ")
		emptied(q)
		q.SQL(" THEN UPDATE goods_listing SET in_stock = FALSE WHERE goods_id = ")
		q.Int(goods)
		q.SQL(" AND in_stock = TRUE AND NOT " + inStockOf("goods_listing.goods_id") + "; END IF; ")
		return
	}
	q.SQL("UPDATE goods_listing SET in_stock = FALSE WHERE ")
	emptied(q)
	q.SQL(" AND goods_id = ")
	q.Int(goods)
	q.SQL(" AND in_stock = TRUE AND NOT " + inStockOf("goods_listing.goods_id") + "; ")
}
