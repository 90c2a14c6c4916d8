package inventory

import (
	"context"
	"database/sql"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/sku"
	"storefront/internal/platform/store"
)

// Version is a fingerprint of what a product page's live stock shows of one
// goods: the goods' own version, status and deletion (an edit, going off
// shelf), its SKUs' stock versions and their terms' versions (a SKU disabled
// or repriced). Two equal Versions show the same stock; a different one may or
// may not, and the watcher then reads the goods again.
type Version struct {
	Goods  int64
	Status string
	// Stock sums the SKUs' stock versions: every stock movement (order, lock,
	// release, restore, adjustment, stocktake, pool) bumps the moved SKU's
	// stock version by one in the statement that moves it, and versions only
	// grow, so the sum grows with every movement. Terms sums the SKUs' terms
	// versions the same way (an edit of status or price, which selectability
	// and the pushed price follow). SKUs counts the rows summed.
	Stock, Terms, SKUs int64
}

// maxWatchIDs bounds one statement's IN list; more goods take more statements.
const maxWatchIDs = 1000

// WatchVersions returns the Version of each goods in ids that exists, in one
// statement per 1000 goods: what package live polls once per interval for
// every goods someone watches, however many watch it.
//
// This is the one place live reads stock versions, so that moving the stock
// columns out of sku (to a table of inventory's own) changes this query and
// nothing else.
func WatchVersions(ctx context.Context, c *ent.Client, ids []int64) (map[int64]Version, error) {
	out := make(map[int64]Version, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), maxWatchIDs)
		if err := watchVersions(ctx, c, ids[:n], out); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}

func watchVersions(ctx context.Context, c *ent.Client, ids []int64, out map[int64]Version) error {
	var rows []struct {
		ID      int64         `sql:"id"`
		Version int64         `sql:"version"`
		Status  string        `sql:"status"`
		Stock   sql.NullInt64 `sql:"stock_version"`
		Terms   sql.NullInt64 `sql:"terms_version"`
		SKUs    int64         `sql:"skus"`
	}
	err := c.Goods.Query().Where(goods.IDIn(ids...)).Modify(func(s *entsql.Selector) {
		t := entsql.Table(sku.Table)
		s.LeftJoin(t).On(s.C(goods.FieldID), t.C(sku.FieldGoodsID))
		s.Select(
			s.C(goods.FieldID), s.C(goods.FieldVersion), s.C(goods.FieldStatus),
			entsql.As(entsql.Sum(t.C(sku.FieldStockVersion)), "stock_version"),
			entsql.As(entsql.Sum(t.C(sku.FieldVersion)), "terms_version"),
			entsql.As(entsql.Count(t.C(sku.FieldID)), "skus"),
		)
		s.GroupBy(s.C(goods.FieldID), s.C(goods.FieldVersion), s.C(goods.FieldStatus))
	}).Scan(ctx, &rows)
	if err != nil {
		return store.Classify(fmt.Errorf("reading the stock versions of %d watched goods: %w", len(ids), err))
	}
	for _, r := range rows {
		out[r.ID] = Version{Goods: r.Version, Status: r.Status, Stock: r.Stock.Int64, Terms: r.Terms.Int64, SKUs: r.SKUs}
	}
	return nil
}
