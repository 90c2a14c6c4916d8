package catalog_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// openSteppedIDs is a fresh database whose auto-increment ids step by 3, as on
// a 3-node Galera cluster (auto_increment_increment = cluster size). On
// MariaDB the step is a session variable, set on every connection through the
// DSN (go-sql-driver sends unknown DSN parameters as SET statements). SQLite
// has no such setting and runs the same checks on plain ids. On PostgreSQL
// every table's id sequence is made to step by 3 after the migration.
func openSteppedIDs(t *testing.T, b testdb.Backend) *store.DB {
	t.Helper()
	switch b {
	case testdb.SQLite:
		return testdb.Open(t, b)
	case testdb.Postgres:
		return steppedPostgres(t)
	}
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(testdb.Spec(t, b), "mysql:"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["auto_increment_increment"] = "3"
	db, err := store.Open(ctx, "mysql:"+cfg.FormatDSN())
	if err != nil {
		t.Fatalf("opening MariaDB with auto_increment_increment=3: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	must.NoErr(t, db.Migrate(ctx))
	var step int
	must.NoErr(t, db.SQL.QueryRowContext(ctx, "SELECT @@SESSION.auto_increment_increment").Scan(&step))
	if step != 3 {
		t.Fatalf("auto_increment_increment = %d, want 3: the test would prove nothing", step)
	}
	return db
}

// Ids of rows written by a multi-row INSERT are learned by their unique key,
// never computed as LAST_INSERT_ID() + i: with ids stepping by 3, and with
// eight createGoods running at once, every SKU still names spec values of its
// own goods, its spec key matches them, every value's spec is of the same
// goods, and every opening ledger row is its SKU's.
func TestMultiRowInsertIDsAreRead(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			db := openSteppedIDs(t, b)
			cat := catalog.New(db, catalog.DefaultConfig())
			t.Cleanup(cat.Close)
			if _, err := demo.Seed(ctx, cat); err != nil { // 500 SKUs: more than one INSERT
				t.Fatalf("demo.Seed: %v", err)
			}
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					in := catalog.CreateInput{Name: fmt.Sprint("并发 ", i), Code: fmt.Sprint("BULK-", i), Status: enums.GoodsOnShelf,
						DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("9.90"), Stock: int64(i + 1)}}
					for d, dim := range []string{"颜色", "尺码", "款式"} {
						sp := catalog.SpecInput{Name: dim}
						for v := range 3 + d {
							sp.Values = append(sp.Values, fmt.Sprintf("%s%d-%d", dim, i, v))
						}
						in.Specs = append(in.Specs, sp)
					}
					<-start
					_, errs[i] = cat.Create(ctx, in)
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("createGoods %d: %v", i, err)
				}
			}
			checkSkuReferences(t, db)
		})
	}
}

// checkSkuReferences checks every SKU, spec value and ledger row in the
// database against the rows they name; it reports the first few mismatches.
func checkSkuReferences(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	specs, err := db.Client.Spec.Query().All(ctx)
	must.NoErr(t, err)
	values, err := db.Client.SpecValue.Query().All(ctx)
	must.NoErr(t, err)
	ledger, err := db.Client.StockLog.Query().All(ctx)
	must.NoErr(t, err)
	skus := skusOf(t, db, 0)

	bad := 0
	report := func(format string, args ...any) {
		t.Helper()
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	specGoods := map[int64]int64{}
	specsOfGoods := map[int64]int{}
	for _, s := range specs {
		specGoods[s.ID] = s.GoodsID
		specsOfGoods[s.GoodsID]++
	}
	type value struct {
		goods, spec int64
		name        string
	}
	byID := map[int64]value{}
	for _, v := range values {
		byID[v.ID] = value{v.GoodsID, v.SpecID, v.Name}
		if g, ok := specGoods[v.SpecID]; !ok || g != v.GoodsID {
			report("spec value %d (%s) of goods %d names spec %d, which is of goods %d (exists: %v)", v.ID, v.Name, v.GoodsID, v.SpecID, g, ok)
		}
	}
	skuGoods := map[int64]int64{}
	opened := map[int64]int{}
	for _, s := range skus {
		skuGoods[s.ID] = s.GoodsID
		var ids []int64
		if s.SpecValueIds != "" {
			for _, p := range strings.Split(s.SpecValueIds, ",") {
				id, err := strconv.ParseInt(p, 10, 64)
				if err != nil {
					report("SKU %d: spec_value_ids %q: %v", s.ID, s.SpecValueIds, err)
				}
				ids = append(ids, id)
			}
		}
		names, seenSpec := make([]string, len(ids)), map[int64]bool{}
		for i, id := range ids {
			v, ok := byID[id]
			if !ok || v.goods != s.GoodsID || seenSpec[v.spec] {
				report("SKU %d (%s) of goods %d names spec value %d: exists %v, of goods %d, spec %d twice %v",
					s.ID, s.SpecValueStr, s.GoodsID, id, ok, v.goods, v.spec, seenSpec[v.spec])
			}
			seenSpec[v.spec], names[i] = true, v.name
		}
		if len(ids) != specsOfGoods[s.GoodsID] {
			report("SKU %d names %d values, its goods %d has %d specs", s.ID, len(ids), s.GoodsID, specsOfGoods[s.GoodsID])
		}
		if str := strings.Join(names, ","); str != s.SpecValueStr {
			report("SKU %d: spec_value_str %q, its values are named %q", s.ID, s.SpecValueStr, str)
		}
		if key := skumatrix.SpecKey(ids); key != s.SpecKey {
			report("SKU %d: spec_key %q, its values make %q", s.ID, s.SpecKey, key)
		}
	}
	for _, r := range ledger {
		g, ok := skuGoods[r.ItemID]
		if !ok || g != r.GoodsID {
			report("ledger row %d (%s %s) of goods %d is for SKU %d: exists %v, of goods %d", r.ID, r.BizType, r.BizSn, r.GoodsID, r.ItemID, ok, g)
		}
		opened[r.ItemID]++
	}
	for _, s := range skus {
		if opened[s.ID] != 1 {
			report("SKU %d (%s) has %d opening ledger rows, want 1", s.ID, s.SpecValueStr, opened[s.ID])
		}
	}
	if bad > 10 {
		t.Errorf("… and %d more mismatches (%d SKUs, %d spec values, %d ledger rows)", bad-10, len(skus), len(values), len(ledger))
	}
}

func steppedPostgres(t *testing.T) *store.DB {
	ctx := context.Background()
	db := testdb.Open(t, testdb.Postgres)
	rs, err := db.SQL.QueryContext(ctx, "SELECT schemaname || '.' || sequencename FROM pg_sequences")
	must.NoErr(t, err)
	var seqs []string
	for rs.Next() {
		var s string
		must.NoErr(t, rs.Scan(&s))
		seqs = append(seqs, s)
	}
	must.NoErr(t, rs.Err())
	rs.Close()
	if len(seqs) < 5 {
		t.Fatalf("%d id sequences: the test would prove nothing", len(seqs))
	}
	for _, s := range seqs {
		_, err := db.SQL.ExecContext(ctx, "ALTER SEQUENCE "+s+" INCREMENT BY 3")
		must.NoErr(t, err)
	}
	return db
}
