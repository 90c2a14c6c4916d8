//go:build fault

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// kill -9 in the middle of a checkout load, then restart on the same
// database: nothing a client was told is lost, nothing half-written stays.
func TestFaultKillDuringCheckout(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			id := setStockTo(t, s, "黑色,L", 100000) // never runs out: every request writes
			stop := make(chan struct{})
			o, wg := load(t, s.URL, id, 32, stop)
			wait.Within(t, "50 orders before the kill", 30*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				return len(orders) >= 50
			})
			kill9(t, s)
			time.Sleep(200 * time.Millisecond) // the load meets a dead server
			close(stop)
			wg.Wait()
			seen, codes, _ := o.snapshot()
			t.Logf("before and at the kill: %d orders seen, outcomes %v", len(seen), codes)
			for code := range codes {
				if code != "" && code != "transport" {
					t.Errorf("a client got %q (%d times) before the kill", code, codes[code])
				}
			}

			s2 := Start(t, spec) // the restart: migrate and demo seeding on a crashed database
			checkDurable(t, spec, seen)
			if r := s2.Query(t, s2.AdminToken, `{ stockReconciliation { itemId diff } }`, nil); string(r.Data) != `{"stockReconciliation":[]}` {
				t.Errorf("stockReconciliation after the restart: %s %+v", r.Data, r.Errors)
			}
			// And it takes orders again.
			if r := s2.Query(t, s2.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}); len(r.Errors) > 0 {
				t.Errorf("order after the restart: %+v", r.Errors)
			}
		})
	}
}

// The same kill -9 with the hot goods sold lock-at-order (issue 17), and
// payments arriving during the load: orders raise lock_stock and book no
// ledger row, a payment turns its order's lock into a deduction (change
// type 2). After the restart every order a client was told exists, every
// payment the webhook acknowledged has paid its order exactly once, every
// line is in the lock state its order's status says, the locks equal the
// open LOCKED lines, and `storefront reconcile` (which checks the locks too)
// is clean.
func TestFaultKillDuringLockModeCheckout(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			id := setStockTo(t, s, "黑色,L", 100000)
			var g struct{ SetGoodsStockMode struct{ StockMode string } }
			decode(t, s.Query(t, s.AdminToken, `mutation { setGoodsStockMode(goodsId: 1, mode: LOCK_AT_ORDER) { stockMode } }`, nil), &g)
			if g.SetGoodsStockMode.StockMode != "LOCK_AT_ORDER" {
				t.Fatalf("setGoodsStockMode: %+v", g)
			}
			// One order first, for its amount (the load's orders are alike).
			var probe placed
			decode(t, s.Query(t, s.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}), &probe)

			stop := make(chan struct{})
			o, wg := load(t, s.URL, id, 32, stop)
			p, pwg := payLoad(s.URL, probe.PlaceOrder.Amount, o, 4, stop)
			wait.Within(t, "50 orders and 20 acknowledged payments before the kill", 60*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				paid, _, _ := p.snapshot()
				return len(orders) >= 50 && len(paid) >= 20
			})
			kill9(t, s)
			time.Sleep(200 * time.Millisecond) // the load and the payments meet a dead server
			close(stop)
			wg.Wait()
			pwg.Wait()
			seen, codes, _ := o.snapshot()
			paid, payCodes, _ := p.snapshot()
			t.Logf("before and at the kill: %d orders seen, outcomes %v; %d payments acknowledged, outcomes %v", len(seen), codes, len(paid), payCodes)
			for code := range codes {
				if code != "" && code != "transport" {
					t.Errorf("a client got %q (%d times) before the kill", code, codes[code])
				}
			}
			for code := range payCodes {
				if code != "" && code != "transport" {
					t.Errorf("the webhook answered %q (%d times) before the kill", code, payCodes[code])
				}
			}

			s2 := Start(t, spec)
			checkLocks(t, spec, id, append(seen, probe.PlaceOrder.OrderSn), paid)
			if r := s2.Query(t, s2.AdminToken, `{ stockReconciliation { itemId diff lockDiff } }`, nil); string(r.Data) != `{"stockReconciliation":[]}` {
				t.Errorf("stockReconciliation after the restart: %s %+v", r.Data, r.Errors)
			}
			// And it takes lock-mode orders and their payments again.
			var again placed
			decode(t, s2.Query(t, s2.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}), &again)
			if code, answer, err := sendPayment(s2.URL, again.PlaceOrder.OrderSn, again.PlaceOrder.Amount); err != nil || code != 200 || answer != "success" {
				t.Errorf("payment after the restart: HTTP %d %q %v", code, answer, err)
			}
			checkLocks(t, spec, id, []string{again.PlaceOrder.OrderSn}, []string{again.PlaceOrder.OrderSn})

			// The checks above can see a lock difference: one planted by hand
			// shows in both, with its size.
			db, err := store.Open(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.SQL.Exec("UPDATE sku SET lock_stock = lock_stock + 3 WHERE id = ?", id); err != nil {
				t.Fatal(err)
			}
			var rec struct {
				StockReconciliation []struct {
					ItemID                      string
					Diff, LockDiff              int
					LockedStock, LockedByOrders int
				}
			}
			decode(t, s2.Query(t, s2.AdminToken, `{ stockReconciliation { itemId diff lockDiff lockedStock lockedByOrders } }`, nil), &rec)
			if r := rec.StockReconciliation; len(r) != 1 || r[0].ItemID != id || r[0].Diff != 0 || r[0].LockDiff != 3 || r[0].LockedStock-r[0].LockedByOrders != 3 {
				t.Errorf("stockReconciliation with 3 units locked by hand: %+v, want SKU %s with lockDiff 3", r, id)
			}
			if out, clean := reconcileCLI(t, spec); clean || !strings.Contains(out, "+3") {
				t.Errorf("storefront reconcile with 3 units locked by hand: clean %v\n%s", clean, out)
			}
		})
	}
}

// payLoad pays every other order the load's clients were told exists, with
// signed notifications of the demo mock provider sent by workers
// goroutines, until stop is closed. The orders it records are those whose
// notification the webhook answered 200 success.
func payLoad(url, amount string, orders *outcomes, workers int, stop <-chan struct{}) (*outcomes, *sync.WaitGroup) {
	todo := make(chan string, 1024)
	go func() {
		defer close(todo)
		next := 0
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			seen, _, _ := orders.snapshot()
			for ; next < len(seen); next++ {
				if next%2 == 1 {
					continue
				}
				select {
				case todo <- seen[next]:
				case <-stop:
					return
				}
			}
		}
	}()
	p := &outcomes{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for sn := range todo {
				start := time.Now()
				code, answer, err := sendPayment(url, sn, amount)
				switch {
				case err != nil:
					p.add("", "transport", time.Since(start))
				case code != 200 || answer != "success":
					p.add("", fmt.Sprintf("HTTP %d %s", code, answer), time.Since(start))
				default:
					p.add(sn, "", time.Since(start))
				}
			}
		})
	}
	return p, &wg
}

// sendPayment posts the demo mock provider's SUCCESS for order sn (its
// payment id derived from the order) and returns the webhook's answer.
func sendPayment(url, sn, amount string) (int, string, error) {
	body, _ := json.Marshal(mock.Notification{EventID: "ev-" + sn, PaymentID: "pay-" + sn, OrderSn: sn, Amount: amount,
		Currency: "CNY", MerchantID: "mock-merchant", Status: "SUCCESS", Timestamp: time.Now().Unix()})
	req, err := http.NewRequest("POST", url+"/payments/mock/notify", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Signature", mock.Sign("mock-secret", body))
	resp, err := loadClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(raw)), err
}

// checkLocks asserts what a crash must not break for lock-at-order goods:
// every order in seen exists; every order in paid is PAID, its lines
// DEDUCTED with exactly one change-type-2 row each; every order's lines are
// lock-mode, LOCKED while it is UNPAID and DEDUCTED once PAID; no order of
// the SKU booked a row at order (change type 1); the SKU's lock_stock is the
// units of the LOCKED lines of UNPAID orders; and `storefront reconcile`
// is clean.
func checkLocks(t *testing.T, spec, itemID string, seen, paid []string) {
	t.Helper()
	db, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	missing := 0
	for _, sn := range seen {
		if dbIntArgs(t, db, "SELECT COUNT(*) FROM orders WHERE order_sn = ?", sn) != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d orders that clients saw succeed are not in the database", missing, len(seen))
	}
	unpaid := 0
	for _, sn := range paid {
		if dbIntArgs(t, db, "SELECT COUNT(*) FROM orders WHERE order_sn = ? AND status = 'PAID'", sn) != 1 ||
			dbIntArgs(t, db, "SELECT COUNT(*) FROM stock_log WHERE biz_sn = ? AND change_type = 2", sn) != 1 {
			unpaid++
		}
	}
	if unpaid > 0 {
		t.Errorf("%d of %d payments the webhook acknowledged did not pay their order with exactly one change-type-2 row", unpaid, len(paid))
	}
	for _, c := range []struct{ what, q string }{
		{"lines of the SKU not placed lock-at-order", "SELECT COUNT(*) FROM order_line WHERE item_id = ? AND stock_mode <> 'LOCK_AT_ORDER'"},
		{"UNPAID orders' lines not LOCKED", "SELECT COUNT(*) FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.item_id = ? AND o.status = 'UNPAID' AND l.lock_state <> 'LOCKED'"},
		{"PAID orders' lines not DEDUCTED", "SELECT COUNT(*) FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.item_id = ? AND o.status = 'PAID' AND l.lock_state <> 'DEDUCTED'"},
		{"orders of the SKU in another status", "SELECT COUNT(*) FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.item_id = ? AND o.status NOT IN ('UNPAID', 'PAID')"},
		{"ledger rows at order (change type 1)", "SELECT COUNT(*) FROM stock_log WHERE item_id = ? AND change_type = 1"},
		{"PAID orders whose change-type-2 rows do not take their units", `SELECT COUNT(*) FROM orders o WHERE o.status = 'PAID'
		   AND EXISTS (SELECT 1 FROM order_line l WHERE l.order_id = o.id AND l.item_id = ?)
		   AND (SELECT SUM(l.quantity) FROM order_line l WHERE l.order_id = o.id)
		    <> (SELECT COALESCE(-SUM(s.change_num), 0) FROM stock_log s WHERE s.biz_sn = o.order_sn AND s.change_type = 2)`},
		{"units locked beyond the open LOCKED lines (lock_stock - their sum)", `SELECT s.lock_stock - (SELECT COALESCE(SUM(l.quantity), 0) FROM order_line l
		   JOIN orders o ON o.id = l.order_id WHERE l.item_id = s.id AND o.status = 'UNPAID' AND l.lock_state = 'LOCKED') FROM sku s WHERE s.id = ?`},
	} {
		if n := dbIntArgs(t, db, c.q, itemID); n != 0 {
			t.Errorf("%s: %d", c.what, n)
		}
	}
	t.Logf("SKU %s: stock %d, locked %d, %d orders (%d PAID)", itemID, dbIntArgs(t, db, "SELECT stock FROM sku WHERE id = ?", itemID),
		dbIntArgs(t, db, "SELECT lock_stock FROM sku WHERE id = ?", itemID), dbIntArgs(t, db, "SELECT COUNT(DISTINCT order_id) FROM order_line WHERE item_id = ?", itemID),
		dbIntArgs(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'PAID'"))
	if out, clean := reconcileCLI(t, spec); !clean {
		t.Errorf("storefront reconcile:\n%s", out)
	}
}

func dbIntArgs(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
