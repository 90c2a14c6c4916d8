package listing

import "storefront/internal/platform/store"

// Postgres renders the listing's writes in the group-commit batch's query
// on PostgreSQL (inventory.PostgresBatch).
type Postgres struct{}

// Emptied renders Emptied as a statement of its own after the CAS that
// took from SKU item of goods (a statement after it sees the row the CAS wrote). The condition on
// what the SKU has left comes first and reads no column of the listing, so
// the planner makes it a one-time filter: a SKU that kept stock makes the
// statement read and lock no listing row.
func (Postgres) Emptied(q *store.Text, goods, item int64) {
	q.SQL("UPDATE goods_listing SET in_stock = FALSE WHERE (SELECT stock - lock_stock FROM sku WHERE id = ")
	q.Int(item)
	q.SQL(") <= 0 AND goods_id = ")
	q.Int(goods)
	q.SQL(" AND in_stock = TRUE AND NOT " + inStockOf("goods_listing.goods_id") + "; ")
}
