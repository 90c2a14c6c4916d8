package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// The counters an operator watches move with real traffic, and the
// periodic reconciliation inside serve finds a write that bypassed the
// ledger: both gauges, one error line per SKU, the CLI's exit status.
func TestOperationsMetricsOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec, "--reconcile-interval", "200ms")
			id, _ := tshirtSku(t, s, "黑色,L")
			var p placed
			items := map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}
			decode(t, s.queryWithKey(t, s.CustomerToken, "metrics-1", placeOrder, items), &p)
			decode(t, s.queryWithKey(t, s.CustomerToken, "metrics-1", placeOrder, items), &struct{}{}) // a double click
			wantCode(t, "black S (no stock)", s.Query(t, s.CustomerToken, placeOrder,
				map[string]any{"items": []map[string]any{{"goodsId": "1", "specValueIds": []string{"1", "4"}, "quantity": 1}}}), "OUT_OF_STOCK")
			decode(t, s.Query(t, s.CustomerToken, `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`, map[string]any{"sn": p.PlaceOrder.OrderSn}), &struct{}{})
			for series, want := range map[string]string{
				`storefront_orders_placed_total`:                                              "2",
				`storefront_idempotent_replays_total`:                                         "1",
				`storefront_out_of_stock_total`:                                               "1",
				`storefront_orders_closed_total{cause="cancel"}`:                              "1",
				`storefront_graphql_requests_total{operation="placeOrder",outcome="ok"}`:      "2",
				`storefront_graphql_requests_total{operation="placeOrder",outcome="error"}`:   "1",
				`storefront_graphql_errors_total{code="OUT_OF_STOCK",operation="placeOrder"}`: "1",
				`storefront_stock_ledger_diff_skus`:                                           "0",
				`storefront_stock_negative_skus`:                                              "0",
			} {
				if got := metricValue(t, s, series); got != want {
					t.Errorf("%s = %q, want %s", series, got, want)
				}
			}
			if metricValue(t, s, `storefront_go_sql_in_use_connections{db_name="`+map[testdb.Backend]string{testdb.SQLite: "sqlite3", testdb.MySQL: "mysql", testdb.Postgres: "postgres"}[b]+`"}`) == "" {
				t.Error("no DB pool metrics")
			}

			// Two writes around the ledger: one SKU off by +5, one negative.
			db, err := store.Open(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{"UPDATE sku SET stock = stock + 5 WHERE id = " + id, "UPDATE sku SET stock = -3 WHERE id = 2"} {
				if _, err := db.SQL.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			wait.Within(t, "the periodic check to see both SKUs", 15*time.Second, func() bool {
				return metricValue(t, s, "storefront_stock_ledger_diff_skus") == "2" && metricValue(t, s, "storefront_stock_negative_skus") == "1"
			})
			var d struct {
				StockReconciliation []struct {
					ItemID string
					Diff   int
				}
			}
			decode(t, s.Query(t, s.AdminToken, `{ stockReconciliation { itemId diff } }`, nil), &d)
			if len(d.StockReconciliation) != 2 {
				t.Errorf("stockReconciliation = %+v, want 2 SKUs", d.StockReconciliation)
			}
			if out, clean := reconcileCLI(t, spec); clean || !strings.Contains(out, "2 SKU(s) differ") {
				t.Errorf("reconcile CLI exited 0 or said:\n%s", out)
			}
			s.Stop(t)
			if log := s.stderr.String(); !strings.Contains(log, `"msg":"stock differs from the ledger","item_id":`+id) {
				t.Errorf("no error line for SKU %s in the log:\n%.2000s", id, log)
			}
		})
	}
}
