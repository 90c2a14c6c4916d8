package checkout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// fixture is a checkout service on the demo catalog with a movable clock.
type fixture struct {
	db    *store.DB
	svc   *Service
	ids   map[string]int64
	mu    sync.Mutex
	clock time.Time
}

// path is one way of placing an order; the checkout suite runs on each.
type path struct {
	name  string
	group bool
}

// eachPath runs fn on SQLite and MariaDB, on the plain path and on the group
// path (where every single-SKU order named by id goes through a batch
// transaction, a lone one as a batch of one).
func eachPath(t *testing.T, fn func(t *testing.T, db *store.DB, p path)) {
	for _, p := range []path{{"plain", false}, {"group", true}} {
		t.Run(p.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) { fn(t, db, p) })
		})
	}
}

// setup returns a fixture on the demo catalog; with a path, on that path,
// otherwise with the production defaults.
func setup(t *testing.T, db *store.DB, p ...path) *fixture {
	t.Helper()
	ids, err := demo.Seed(context.Background(), catalog.New(db, catalog.DefaultConfig()))
	if err != nil {
		t.Fatalf("demo.Seed: %v", err)
	}
	f := &fixture{db: db, ids: ids, clock: time.Now().UTC()}
	cfg := DefaultConfig()
	if len(p) > 0 {
		cfg.GroupCommit = p[0].group
	}
	f.svc = New(db, cfg)
	if len(p) > 0 && p[0].group {
		// The group path means batches here, on every backend: on SQLite
		// a lone order would otherwise take the plain path (placeLone),
		// and the suite's one-at-a-time orders would test the plain path
		// twice. TestGroupLoneOrdersRunAlone covers the default.
		f.svc.loneOnPlain = false
	}
	f.svc.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.clock }
	return f
}

// mysqlWith returns a fresh migrated MariaDB database whose sessions run
// with the DSN parameter param (go-sql-driver sets an unknown parameter as a
// session variable), e.g. auto_increment_increment=3 as on a Galera cluster.
func mysqlWith(t *testing.T, param string) *store.DB {
	t.Helper()
	spec := testdb.Spec(t, testdb.MySQL)
	sep := "?"
	if strings.Contains(spec, "?") {
		sep = "&"
	}
	db, err := store.Open(context.Background(), spec+sep+param)
	if err != nil {
		t.Fatalf("opening MariaDB with %s: %v", param, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got string
	name := strings.SplitN(param, "=", 2)[0]
	if err := db.SQL.QueryRow("SELECT @@SESSION." + name).Scan(&got); err != nil || got != strings.SplitN(param, "=", 2)[1] {
		t.Fatalf("the session's %s is %q (%v), want %s", name, got, err, param)
	}
	return db
}

func (f *fixture) advance(d time.Duration) { f.mu.Lock(); f.clock = f.clock.Add(d); f.mu.Unlock() }

// skuID finds a T-shirt SKU by its spec text ("黑色,L").
func (f *fixture) skuID(t *testing.T, spec string) int64 {
	t.Helper()
	id, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.TShirtCode]), sku.SpecValueStr(spec)).OnlyID(context.Background())
	if err != nil {
		t.Fatalf("SKU %s: %v", spec, err)
	}
	return id
}

func (f *fixture) stock(t *testing.T, id int64) int64 { return testdb.Stock(t, f.db, id) }

func (f *fixture) setStock(t *testing.T, id, n int64) {
	t.Helper()
	if _, err := f.db.SQL.Exec("UPDATE sku SET stock = ? WHERE id = ?", n, id); err != nil {
		t.Fatal(err)
	}
	// Keep the ledger balanced: an adjustment row for the difference.
	diff := n - f.ledgerSum(t, id, 0)
	if _, err := f.db.SQL.Exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
		"SELECT id, goods_id, 5, ?, ?, stock, 'manual', ?, '', ? FROM sku WHERE id = ?",
		diff, n-diff, time.Now().Format("150405.000000000"), time.Now().UTC(), id); err != nil {
		t.Fatal(err)
	}
}

// ledgerSum is the sum of the SKU's ledger rows (of one change type when ct > 0).
func (f *fixture) ledgerSum(t *testing.T, id int64, ct int) int64 {
	t.Helper()
	q := "SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ?"
	args := []any{id}
	if ct > 0 {
		q += " AND change_type = ?"
		args = append(args, ct)
	}
	var n int64
	if err := f.db.SQL.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// deductions lists the SKU's order deductions in the ledger, in booking
// order, as "orderSn before→after".
func (f *fixture) deductions(t *testing.T, id int64) string {
	t.Helper()
	rows, err := f.db.SQL.Query("SELECT biz_sn, before_stock, after_stock FROM stock_log WHERE item_id = ? AND change_type = 1 ORDER BY id", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var sn string
		var b, a int64
		if err := rows.Scan(&sn, &b, &a); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(sn, " ", b, "→", a))
	}
	return fmt.Sprint(got)
}

func (f *fixture) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := f.db.SQL.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// events counts the outbox's events (a batch's row holds several).
func (f *fixture) events(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.SQL.QueryRow("SELECT COALESCE(SUM(events), 0) FROM outbox").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// counts snapshots every table checkout writes ("outbox": its events).
func (f *fixture) counts(t *testing.T) map[string]int {
	m := map[string]int{}
	for _, tb := range []string{"orders", "order_line", "stock_log", "idempotency_key"} {
		m[tb] = f.count(t, tb)
	}
	m["outbox"] = f.events(t)
	return m
}

func one(id, qty int64) ItemInput { return ItemInput{ItemID: &id, Quantity: qty} }

// race runs n calls of fn with at most par running at once, on real goroutines.
func race(n, par int, fn func(i int)) {
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// hooksOf is the commit hooks of svc's batch writer on a server (nil on
// SQLite).
func hooksOf(svc *Service) *commitHooks {
	sb, ok := svc.batcher.(*serverBatcher)
	if !ok {
		return nil
	}
	switch w := sb.w.(type) {
	case *mysqlWriter:
		return &w.commitHooks
	case *postgresWriter:
		return &w.commitHooks
	}
	return nil
}
