package resolvers

import (
	"context"
	"sync"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/inventory"
)

// Sku.activePool is read per goods, once per request: a product page asks
// it of every SKU, and one query per SKU would make an anonymous page of
// the 500-SKU shoe (times 20 aliases) thousands of queries.

type activePoolsKey struct{}

// activePools memoises, for one request, the active pools of each goods
// asked about.
type activePools struct {
	mu      sync.Mutex
	now     time.Time
	byGoods map[int64]map[int64]*inventory.Pool
}

// WithRequestMemo returns ctx carrying the memo of one request's reads
// (the server wraps every operation in it).
func WithRequestMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, activePoolsKey{}, &activePools{now: time.Now()})
}

// activePool is SKU k's pool on sale now: from the request's memo (one
// query per goods), or by itself outside a request.
func (r *Resolver) activePool(ctx context.Context, k *catalog.SKU) (*inventory.Pool, error) {
	m, _ := ctx.Value(activePoolsKey{}).(*activePools)
	if m == nil {
		return r.Inventory.ActivePool(ctx, k.ID, time.Now())
	}
	m.mu.Lock()
	defer m.mu.Unlock() // concurrent SKU resolvers of one goods wait for its one query
	pools, ok := m.byGoods[k.GoodsID]
	if !ok {
		var err error
		if pools, err = r.Inventory.ActivePools(ctx, k.GoodsID, m.now); err != nil {
			return nil, err
		}
		if m.byGoods == nil {
			// Made at the first read: most operations (every placeOrder) read no pool.
			m.byGoods = map[int64]map[int64]*inventory.Pool{}
		}
		m.byGoods[k.GoodsID] = pools
	}
	return pools[k.ID], nil
}
