package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/checkout"
	"storefront/internal/testsupport/testdb"
)

// queryWithKey posts like Server.Query, plus an Idempotency-Key header.
func (s *Server) queryWithKey(t *testing.T, token, key, query string, vars map[string]any) *Response {
	t.Helper()
	return s.post(t, token, key, query, vars)
}

func decode(t *testing.T, r *Response, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Data, err)
	}
}

// tshirtSku returns the id and stock of a demo T-shirt SKU by spec text.
func tshirtSku(t *testing.T, s *Server, spec string) (string, int) {
	t.Helper()
	var d struct {
		Goods struct {
			Skus []struct {
				ID, SpecValueStr string
				Stock            int
			}
		}
	}
	decode(t, s.Query(t, "", `{ goods(id: 1) { skus { id specValueStr stock } } }`, nil), &d)
	for _, k := range d.Goods.Skus {
		if k.SpecValueStr == spec {
			return k.ID, k.Stock
		}
	}
	t.Fatalf("no SKU %s", spec)
	return "", 0
}

const placeOrder = `mutation($items: [OrderItemInput!]!, $key: String) {
  placeOrder(input: {items: $items, remark: "e2e"}, idempotencyKey: $key) {
    orderSn status amount currency expiresAt
    lines { itemId goodsId goodsName specValueStr unitPrice quantity }
  }
}`

type placed struct {
	PlaceOrder struct {
		OrderSn, Status, Amount, Currency string
		Lines                             []struct {
			ItemID, GoodsName, SpecValueStr, UnitPrice string
			Quantity                                   int
		}
	}
}

type ledger struct {
	StockLedger struct {
		Edges []struct {
			Node struct {
				ChangeType, ChangeNum, BeforeStock, AfterStock int
				BizType, BizSn                                 string
			}
		}
	}
}

// ledgerOf reads a SKU's ledger through the admin query stockLedger.
func ledgerOf(t *testing.T, s *Server, id string) *ledger {
	t.Helper()
	var l ledger
	decode(t, s.Query(t, s.AdminToken, `query($id: ID!) { stockLedger(itemId: $id, first: 100) { edges { node { changeType changeNum beforeStock afterStock bizType bizSn } } } }`, map[string]any{"id": id}), &l)
	return &l
}

// balance is the sum of a SKU's ledger rows.
func balance(t *testing.T, s *Server, id string) int {
	t.Helper()
	sum := 0
	for _, e := range ledgerOf(t, s, id).StockLedger.Edges {
		sum += e.Node.ChangeNum
	}
	return sum
}

// Place, replay with the Idempotency-Key header, cancel, and read the ledger
// back through stockLedger: over HTTP against the real binary.
func TestCheckoutOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			id, stock := tshirtSku(t, s, "黑色,L")
			items := []map[string]any{{"itemId": id, "quantity": 2}}

			if r := s.Query(t, "", placeOrder, map[string]any{"items": items}); r.Code() != "UNAUTHENTICATED" {
				t.Errorf("anonymous placeOrder: code %q, want UNAUTHENTICATED", r.Code())
			}
			var first, replay placed
			decode(t, s.queryWithKey(t, s.CustomerToken, "e2e-key-1", placeOrder, map[string]any{"items": items}), &first)
			o := first.PlaceOrder
			if o.Status != "UNPAID" || o.Amount != "218.00" || o.Currency != "CNY" || len(o.Lines) != 1 || o.Lines[0].UnitPrice != "109.00" || o.Lines[0].SpecValueStr != "黑色,L" {
				t.Errorf("placed %+v", o)
			}
			decode(t, s.queryWithKey(t, s.CustomerToken, "e2e-key-1", placeOrder, map[string]any{"items": items}), &replay)
			if replay.PlaceOrder.OrderSn != o.OrderSn {
				t.Errorf("replay gave order %s, want %s", replay.PlaceOrder.OrderSn, o.OrderSn)
			}
			if r := s.queryWithKey(t, s.CustomerToken, "e2e-key-1", placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 3}}}); r.Code() != "IDEMPOTENCY_KEY_REUSED" {
				t.Errorf("same key, other input: code %q", r.Code())
			}
			// The product page's stock may lag (catalog cache TTL); the ledger is the truth.
			if now := balance(t, s, id); now != stock-2 {
				t.Errorf("ledger balance %d after place + replay, want %d", now, stock-2)
			}
			for _, tc := range []struct {
				items []map[string]any
				code  string
			}{
				{[]map[string]any{{"itemId": id, "quantity": 0}}, "INVALID_QUANTITY"},
				{[]map[string]any{{"itemId": "999999", "quantity": 1}}, "NOT_FOUND"},
				{[]map[string]any{{"quantity": 1}}, "INVALID_INPUT"},
				{[]map[string]any{{"goodsId": "1", "specValueIds": []string{"1", "4"}, "quantity": 1}}, "OUT_OF_STOCK"}, // 黑色/S
			} {
				if r := s.Query(t, s.CustomerToken, placeOrder, map[string]any{"items": tc.items}); r.Code() != tc.code {
					t.Errorf("items %v: code %q, want %s (%+v)", tc.items, r.Code(), tc.code, r.Errors)
				}
			}

			var mine struct {
				MyOrders struct {
					Edges []struct{ Node struct{ OrderSn string } }
				}
			}
			decode(t, s.Query(t, s.CustomerToken, `{ myOrders(first: 10) { edges { node { orderSn } } pageInfo { hasNextPage } } }`, nil), &mine)
			if len(mine.MyOrders.Edges) != 1 || mine.MyOrders.Edges[0].Node.OrderSn != o.OrderSn {
				t.Errorf("myOrders = %+v", mine)
			}

			const cancel = `mutation($sn: String!) { cancelOrder(orderSn: $sn) { orderSn status } }`
			var cancelled struct{ CancelOrder struct{ Status string } }
			decode(t, s.Query(t, s.CustomerToken, cancel, map[string]any{"sn": o.OrderSn}), &cancelled)
			if cancelled.CancelOrder.Status != "CLOSED" {
				t.Errorf("cancel: status %s", cancelled.CancelOrder.Status)
			}
			if r := s.Query(t, s.CustomerToken, cancel, map[string]any{"sn": o.OrderSn}); r.Code() != "INVALID_ORDER_STATE" {
				t.Errorf("second cancel: code %q", r.Code())
			}
			sum, mineRows := 0, map[int]int{}
			for _, e := range ledgerOf(t, s, id).StockLedger.Edges {
				n := e.Node
				sum += n.ChangeNum
				if n.BizSn == o.OrderSn {
					mineRows[n.ChangeType] = n.ChangeNum
					if n.AfterStock-n.BeforeStock != n.ChangeNum {
						t.Errorf("ledger row %+v: before/after do not match the change", n)
					}
				}
			}
			if mineRows[1] != -2 || mineRows[3] != 2 || len(mineRows) != 2 {
				t.Errorf("ledger rows of order %s by change type = %v, want {1: -2, 3: 2}", o.OrderSn, mineRows)
			}
			if sum != stock {
				t.Errorf("ledger balance %d after cancel, want %d", sum, stock)
			}
		})
	}
}

// The timeout closer inside serve, and `storefront close-expired`.
func TestTimeoutClosing(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			// --log-level debug: the log sink writes each event at DEBUG.
			s := Start(t, spec, "--order-ttl", "1s", "--close-interval", "200ms", "--log-level", "debug")
			id, stock := tshirtSku(t, s, "黑色,L")
			var p placed
			decode(t, s.Query(t, s.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 5}}}), &p)
			deadline := time.Now().Add(15 * time.Second)
			for {
				var d struct{ Order struct{ Status string } }
				decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { status } }`, map[string]any{"sn": p.PlaceOrder.OrderSn}), &d)
				if d.Order.Status == "CLOSED" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("order still %s after 15 s with --order-ttl 1s", d.Order.Status)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if now := balance(t, s, id); now != stock {
				t.Errorf("ledger balance %d after the timeout close, want %d", now, stock)
			}
			s.Stop(t)
			// The dispatcher logged both events of the order before the server stopped.
			for _, typ := range []string{checkout.EventOrderPlaced, checkout.EventOrderClosed} {
				if !strings.Contains(s.stderr.String(), `"type":"`+typ+`"`) {
					t.Errorf("no %s event in the server log:\n%s", typ, s.stderr)
				}
			}

			// The command: one pass over the same database with a server stopped.
			cmd := exec.Command(binary(t), "close-expired", "--db", spec, "--order-ttl", "1s")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "closed 0 expired orders") {
				t.Errorf("close-expired: %v\n%s", err, out)
			}
		})
	}
}
