package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/ent/sku"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// orders places the workload's orders of the hot SKU (the demo T-shirt,
// 黑色,L), one unit each, every order with its own key.
type orders struct {
	db    *store.DB
	name  string // the database's name on the server
	svc   *checkout.Service
	hot   int64
	batch int // 0: the plain path
	seq   int
	drop  func()
}

func newOrders(ctx context.Context, spec string, group bool, batch int) (*orders, error) {
	dsn, ok := strings.CutPrefix(spec, "mysql:")
	if !ok {
		return nil, fmt.Errorf("-db %q: want mysql:DSN", spec)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	w := &orders{name: fmt.Sprintf("sfcount_%d", time.Now().UnixNano())}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	if _, err := admin.Exec("CREATE DATABASE " + w.name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		admin.Close()
		return nil, err
	}
	w.drop = func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + w.name)
		admin.Close()
	}
	cfg.DBName = w.name
	if w.db, err = store.Open(ctx, "mysql:"+cfg.FormatDSN()); err != nil {
		w.close()
		return nil, err
	}
	if err := w.db.Migrate(ctx); err != nil {
		w.close()
		return nil, err
	}
	signer, err := auth.NewSigner("count-secret-0123456789abcdef")
	if err != nil {
		w.close()
		return nil, err
	}
	c := app.DefaultConfig()
	c.Checkout.GroupCommit = group
	if group {
		w.batch = batch
		c.Checkout.GroupMax = max(c.Checkout.GroupMax, batch)
	}
	sf := app.New(w.db, nil, signer, c)
	w.svc = sf.Checkout
	ids, err := demo.Seed(ctx, catalog.New(w.db, catalog.DefaultConfig()))
	if err == nil {
		w.hot, err = w.db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("黑色,L")).OnlyID(ctx)
	}
	if err == nil {
		_, err = sf.Inventory.Adjust(ctx, inventory.AdjustInput{ItemID: w.hot, Delta: hotStock, Reason: "bench/count"})
	}
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// place places n orders: one after another, or in batches of w.batch.
func (w *orders) place(ctx context.Context, n int) error {
	step := max(w.batch, 1)
	ins := make([]checkout.PlaceInput, step)
	for done := 0; done < n; done += step {
		for i := range ins {
			w.seq++
			ins[i] = checkout.PlaceInput{UserID: "bench", IdempotencyKey: fmt.Sprint("count-", w.seq),
				Items: []checkout.ItemInput{{ItemID: &w.hot, Quantity: 1}}}
		}
		var err error
		if w.batch == 0 {
			_, err = w.svc.Place(ctx, ins[0])
		} else {
			_, err = w.svc.PlaceBatch(ctx, ins)
		}
		if err != nil {
			return fmt.Errorf("order %d: %w", w.seq, err)
		}
	}
	return nil
}

func (w *orders) close() {
	if w.db != nil {
		w.db.Close()
		w.db = nil
	}
	if w.drop != nil {
		w.drop()
		w.drop = nil
	}
}

// hotStock is the hot SKU's stock: more than any run orders, spelled here so
// that the command builds at every commit it is copied into (the bound's
// constant moved packages since 3011f1b).
const hotStock = 100_000_000
