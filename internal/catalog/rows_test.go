package catalog_test

import (
	"context"
	"testing"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/platform/store"
)

// These helpers read rows the way ent's X methods do, but a failure ends only
// the calling test, with a message: a panic in GetX or OnlyX would stop every
// test left in the package.

func goodsRow(t testing.TB, db *store.DB, id int64) *ent.Goods {
	t.Helper()
	g, err := db.Client.Goods.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("goods %d: %v", id, err)
	}
	return g
}

func skuRow(t testing.TB, db *store.DB, id int64) *ent.Sku {
	t.Helper()
	s, err := db.Client.Sku.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("SKU %d: %v", id, err)
	}
	return s
}

// skusOf returns the goods' SKU rows, or every SKU when goodsID is 0.
func skusOf(t testing.TB, db *store.DB, goodsID int64) []*ent.Sku {
	t.Helper()
	q := db.Client.Sku.Query()
	if goodsID != 0 {
		q = q.Where(sku.GoodsID(goodsID))
	}
	rows, err := q.Order(sku.ByID()).All(context.Background())
	if err != nil {
		t.Fatalf("SKUs of goods %d: %v", goodsID, err)
	}
	return rows
}

// counter is any ent query: they all count.
type counter interface {
	Count(context.Context) (int, error)
}

func countOf(t testing.TB, what string, q counter) int {
	t.Helper()
	n, err := q.Count(context.Background())
	if err != nil {
		t.Fatalf("counting %s: %v", what, err)
	}
	return n
}

// adminView is the admin's product view of a goods that must exist.
func adminView(t testing.TB, cat *catalog.Service, id int64) *catalog.Goods {
	t.Helper()
	g, err := cat.Goods(context.Background(), catalog.Viewer{Admin: true}, id)
	if err != nil || g == nil {
		t.Fatalf("Goods(%d) for an admin = %v, %v", id, g, err)
	}
	return g
}
