package resolvers_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A lock-at-order goods' pool over GraphQL: an order locks on the pool, and
// the public Sku.activePool shows it as lockedStock, with availableStock =
// stock - lockedStock, while the SKU's own lock stays 0.
func TestLockedPoolOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Nanosecond // every read shows the stock as it is
		signer, err := auth.NewSigner("pool-lock-test-secret-0123456789ab")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		cat, inv, co, h := sf.Catalog, sf.Inventory, sf.Checkout, sf.Handler()
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "腕表", Status: enums.GoodsOnShelf, StockMode: enums.LockAtOrder,
			DefaultSku: catalog.SkuTerms{SellPrice: 99900, Stock: 10}})
		if err != nil {
			t.Fatal(err)
		}
		item := g.SkuList(false)[0].ID
		now := time.Now()
		p, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: item, Name: "秒杀", Price: 59900, Quantity: 6, PerBuyerLimit: 3,
			StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := co.Place(ctx, checkout.PlaceInput{UserID: "bob", Items: []checkout.ItemInput{{ItemID: &item, PoolID: &p.ID, Quantity: 2}}}); err != nil {
			t.Fatal(err)
		}
		a := gqltest.Do(t, h, "", `query($id: ID!) { goods(id: $id) { skus { stock lockedStock availableStock activePool { id stock lockedStock availableStock sold } } } }`,
			map[string]any{"id": strconv.FormatInt(g.ID, 10)})
		if a.Code() != "" {
			t.Fatalf("product page: %+v", a.Errors)
		}
		var out struct {
			Skus []struct {
				Stock, LockedStock, AvailableStock int64
				ActivePool                         *struct {
					ID                                       string
					Stock, LockedStock, AvailableStock, Sold int64
				}
			}
		}
		if err := json.Unmarshal(a.Data["goods"], &out); err != nil || len(out.Skus) != 1 || out.Skus[0].ActivePool == nil {
			t.Fatalf("product page: %s (%v)", a.Data["goods"], err)
		}
		s, ap := out.Skus[0], out.Skus[0].ActivePool
		if s.Stock != 4 || s.LockedStock != 0 || s.AvailableStock != 4 {
			t.Errorf("SKU stock %d, locked %d, available %d; want 4, 0, 4 (the pool's lock is on the pool)", s.Stock, s.LockedStock, s.AvailableStock)
		}
		if ap.ID != strconv.FormatInt(p.ID, 10) || ap.Stock != 6 || ap.LockedStock != 2 || ap.AvailableStock != 4 || ap.Sold != 0 {
			t.Errorf("activePool %+v, want stock 6, lockedStock 2, availableStock 4, sold 0", *ap)
		}
	})
}
