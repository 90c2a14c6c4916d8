package checkout

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"storefront/ent"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// line is one SKU of an order being placed, with its price read from the
// database.
type line struct {
	OrderLine
	SpecKey string
	stock   int64 // available as read, without a lock
	ship    shipTerms
}

// sellsOn says whether l was read on the terms t.
func (l *line) sellsOn(t inventory.Terms) bool {
	return l.UnitPrice == t.Price && l.SpecValueStr == t.SpecText && l.GoodsName == t.GoodsName
}

// skuRow is what checkout needs of a SKU and its goods.
type skuRow struct {
	id, goodsID       int64
	specKey, specText string
	price             money.Money
	status            enums.SkuStatus
	goodsName         string
	goodsStatus       enums.GoodsStatus
	mode              enums.StockMode
	stock, locked     int64  // as read, without a lock: on hand, and held by unpaid lock-mode orders
	limit             *int64 // the goods' purchase limit (nil: none)
	ship              shipTerms
	readAt            time.Time // when it was read (lastRead's age)
}

// available is what can be ordered: stock - lock_stock, computed, never stored.
func (r *skuRow) available() int64 { return r.stock - r.locked }

// resolve turns the items into lines: each SKU found (by id or by spec key),
// on shelf and enabled, duplicates merged, sorted by ascending SKU id (the
// lock order every stock-moving transaction follows, so none can deadlock on
// another's SKU rows). One read, nothing written.
func (s *Service) resolve(ctx context.Context, q querier, items []ItemInput, to *shipTo) ([]*line, error) {
	rows, err := s.lookup(ctx, q, items)
	if err != nil {
		return nil, err
	}
	if err := to.read(ctx, q, rows); err != nil {
		return nil, err
	}
	var ids []int64
	for _, it := range items {
		if it.PoolID != nil {
			ids = append(ids, *it.PoolID)
		}
	}
	if len(ids) == 0 {
		return s.buildFrom(items, rows, nil, to)
	}
	pools, _, err := inventory.ReadPoolState(ctx, s.db.SQL, ids, nil)
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.buildFrom(items, rows, pools, to)
}

// buildFrom checks items against the SKU rows read for them and merges them
// into lines (see resolve); the group path calls it with rows read in its
// batch. With the stock pools read for items that name one: a pool line
// sells at the pool's price from the pool's stock, only while the pool is
// on sale. A SKU is ordered from one source per order (main stock or one
// pool), so each restore of the order books one ledger row per SKU. to is
// where the order ships (nil: nowhere, a batch's orders): its fee is worked
// out here (to.fee), for the order's quote (price).
func (s *Service) buildFrom(items []ItemInput, rows []*skuRow, pools map[int64]*ent.StockPool, to *shipTo) ([]*line, error) {
	now := s.now()
	byID := make(map[int64]*skuRow, len(rows))
	for _, r := range rows {
		byID[r.id] = r
	}
	var byKey map[string]*skuRow // built only when an item names spec values
	find := func(it ItemInput) *skuRow {
		if it.ItemID != nil {
			return byID[*it.ItemID]
		}
		if byKey == nil {
			byKey = make(map[string]*skuRow, len(rows))
			for _, r := range rows {
				byKey[fmt.Sprint(r.goodsID, "/", r.specKey)] = r
			}
		}
		return byKey[fmt.Sprint(*it.GoodsID, "/", skumatrix.SpecKey(it.SpecValueIDs))]
	}
	merged := make(map[int64]*line, len(items))
	for i, it := range items {
		r := find(it)
		switch {
		case r == nil && it.ItemID != nil:
			return nil, fmt.Errorf("%w: item %d: no SKU %d", ErrNotFound, i+1, *it.ItemID)
		case r == nil:
			return nil, fmt.Errorf("%w: item %d: goods %d has no SKU with spec values %v", ErrNotFound, i+1, *it.GoodsID, it.SpecValueIDs)
		}
		if r.goodsStatus != enums.GoodsOnShelf || r.status != enums.SkuEnabled {
			return nil, fmt.Errorf("%w: SKU %d (%s %s) is not on sale", ErrSkuUnavailable, r.id, r.goodsName, r.specText)
		}
		var pool *ent.StockPool
		if it.PoolID != nil {
			switch pool = pools[*it.PoolID]; {
			case pool == nil:
				return nil, fmt.Errorf("%w: item %d: no stock pool %d", ErrNotFound, i+1, *it.PoolID)
			case pool.ItemID != r.id:
				return nil, fmt.Errorf("%w: item %d: stock pool %d is not of SKU %d", ErrInvalidInput, i+1, pool.ID, r.id)
			case !inventory.PoolOpen(pool, now):
				return nil, fmt.Errorf("%w: pool %d (%s) sells from %s to %s", inventory.ErrPoolNotActive, pool.ID, pool.Name,
					pool.StartsAt.Format(time.RFC3339), pool.EndsAt.Format(time.RFC3339))
			}
		}
		l := merged[r.id]
		if l == nil {
			l = &line{OrderLine: OrderLine{ItemID: r.id, GoodsID: r.goodsID, GoodsName: r.goodsName, SpecValueStr: r.specText, UnitPrice: r.price, StockMode: r.mode, limit: r.limit}, SpecKey: r.specKey, stock: r.available(), ship: r.ship}
			if pool != nil {
				// The pool follows the goods' mode: a lock-at-order pool
				// line locks on the pool's row (its lock_stock) and is
				// deducted from it at payment.
				l.UnitPrice, l.PoolID, l.stock = pool.Price, pool.ID, pool.Stock-pool.LockStock
				l.poolLimit = pool.PerBuyerLimit
			}
			merged[r.id] = l
		} else if pool == nil && l.PoolID != 0 || pool != nil && l.PoolID != pool.ID {
			return nil, fmt.Errorf("%w: item %d: SKU %d is ordered from more than one source (main stock or one pool per order)", ErrInvalidInput, i+1, r.id)
		}
		l.Quantity += it.Quantity
		if it.MaxPrice != nil && l.UnitPrice > *it.MaxPrice {
			// Read here, from the row the order is priced by: a rise after
			// this read fails the take's terms and reads again.
			return nil, fmt.Errorf("%w: SKU %d (%s %s) now costs %s, above the %s seen", ErrPriceChanged, r.id, r.goodsName, r.specText, l.UnitPrice, *it.MaxPrice)
		}
		if l.Quantity > s.cfg.MaxQuantity {
			return nil, fmt.Errorf("%w: SKU %d: %d in total, at most %d", ErrInvalidQuantity, r.id, l.Quantity, s.cfg.MaxQuantity)
		}
	}
	lines := make([]*line, 0, len(merged))
	for _, l := range merged {
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b *line) int { return cmp.Compare(a.ItemID, b.ItemID) })
	if err := to.fee(lines); err != nil {
		return nil, err
	}
	return lines, nil
}

// lookup reads every named SKU with its goods in one statement (a join: one
// round trip on the path every order takes).
func (s *Service) lookup(ctx context.Context, q querier, items []ItemInput) ([]*skuRow, error) {
	var where []string
	var args []any
	for _, it := range items {
		if it.ItemID != nil {
			where = append(where, "s.id = ?")
			args = append(args, *it.ItemID)
		} else {
			where = append(where, "(s.goods_id = ? AND s.spec_key = ?)")
			args = append(args, *it.GoodsID, skumatrix.SpecKey(it.SpecValueIDs))
		}
	}
	rows, err := readSKUs(ctx, q, strings.Join(where, " OR "), args)
	return rows, store.Classify(err)
}

// querier is a client or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readSKUs reads the SKUs matching where, each with its goods and its stock
// (a plain read: the stock is what the caller saw, not a lock).
func readSKUs(ctx context.Context, q querier, where string, args []any) ([]*skuRow, error) {
	rs, err := q.QueryContext(ctx, "SELECT s.id, s.goods_id, s.spec_key, s.spec_value_str, s.sell_price, s.status, "+
		"g.name, g.status, g.stock_mode, s.stock, s.lock_stock, g.purchase_limit, COALESCE(g.shipping_template_id, 0), s.weight_grams "+
		"FROM sku s JOIN goods g ON g.id = s.goods_id WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("loading SKUs: %w", err)
	}
	defer rs.Close()
	var out []*skuRow
	now := time.Now()
	for rs.Next() {
		r := &skuRow{readAt: now}
		var limit sql.NullInt64
		if err := rs.Scan(&r.id, &r.goodsID, &r.specKey, &r.specText, &r.price, &r.status, &r.goodsName, &r.goodsStatus, &r.mode, &r.stock, &r.locked, &limit, &r.ship.template, &r.ship.weight); err != nil {
			return nil, fmt.Errorf("reading SKUs: %w", err)
		}
		if limit.Valid {
			r.limit = &limit.Int64
		}
		out = append(out, r)
	}
	return out, rs.Err()
}
