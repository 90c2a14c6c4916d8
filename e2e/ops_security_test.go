package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Tokens that must never authenticate, each tried on a protected query.
func badTokens(t *testing.T, good string) map[string]string {
	t.Helper()
	sign := func(key string, c jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	adminClaims := func(exp time.Time) jwt.MapClaims {
		return jwt.MapClaims{"sub": "mallory", "role": "admin", "exp": exp.Unix(), "iat": time.Now().Unix()}
	}
	b64 := base64.RawURLEncoding.EncodeToString
	head, _, _ := strings.Cut(good, ".")
	sig := good[strings.LastIndex(good, ".")+1:]
	forgedBody := b64([]byte(`{"sub":"demo-customer","role":"admin","exp":` + jsonInt(time.Now().Add(time.Hour).Unix()) + `}`))
	return map[string]string{
		// The customer's real signature over a payload promoted to admin.
		"forged payload": head + "." + forgedBody + "." + sig,
		"expired":        sign(e2eSecret, adminClaims(time.Now().Add(-time.Minute))),
		"alg=none":       b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(mustJSON(t, adminClaims(time.Now().Add(time.Hour)))) + ".",
		"wrong secret":   sign("another-secret-0123456789abcdef", adminClaims(time.Now().Add(time.Hour))),
		"no expiry":      sign(e2eSecret, jwt.MapClaims{"sub": "mallory", "role": "admin"}),
		"garbage":        "not.a.token",
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// injection is SQL that would do damage if any input were spliced into a
// statement; it must come back byte for byte and leave the tables alone.
const injection = `'; DROP TABLE sku; -- "x" \ 黑`

func TestSecurityOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			id, _ := tshirtSku(t, s, "黑色,L")
			alice, bob := tokenFor(t, "alice", auth.Customer), tokenFor(t, "bob", auth.Customer)

			// Bad tokens: UNAUTHENTICATED on protected operations, never a role.
			for name, tok := range badTokens(t, s.CustomerToken) {
				for _, q := range []string{`{ myOrders { edges { node { orderSn } } } }`, `{ stockReconciliation { itemId } }`} {
					if r := s.Query(t, tok, q, nil); r.Code() != "UNAUTHENTICATED" {
						t.Errorf("%s token on %s: code %q, data %s", name, q, r.Code(), r.Data)
					}
				}
			}

			// Alice's order is invisible to Bob and cannot be cancelled by him.
			var p placed
			decode(t, s.Query(t, alice, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}), &p)
			sn := p.PlaceOrder.OrderSn
			if r := s.Query(t, bob, `query($sn: String!) { order(orderSn: $sn) { orderSn amount } }`, map[string]any{"sn": sn}); string(r.Data) != `{"order":null}` || len(r.Errors) > 0 {
				t.Errorf("bob reads alice's order: %s %+v", r.Data, r.Errors)
			}
			cancel := `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`
			wantCode(t, "bob cancels alice's order", s.Query(t, bob, cancel, map[string]any{"sn": sn}), "FORBIDDEN")
			var still struct{ Order struct{ Status string } }
			decode(t, s.Query(t, alice, `query($sn: String!) { order(orderSn: $sn) { status } }`, map[string]any{"sn": sn}), &still)
			if still.Order.Status != "UNPAID" {
				t.Errorf("alice's order after bob's attempt: %s", still.Order.Status)
			}

			// Every admin operation refuses a customer, before touching anything.
			for _, c := range []struct{ name, q string }{
				{"createGoods", `mutation { createGoods(input: {name: "x"}) { id } }`},
				{"updateGoodsSpecs", `mutation { updateGoodsSpecs(input: {goodsId: 1, expectedVersion: 1, specs: []}) { id } }`},
				{"updateSku", `mutation { updateSku(input: {itemId: ` + id + `, expectedVersion: 1, sellPrice: "0.01"}) { id } }`},
				{"setGoodsStatus", `mutation { setGoodsStatus(goodsId: 1, status: OFF_SHELF) { id } }`},
				{"adjustStock", `mutation { adjustStock(input: {itemId: ` + id + `, delta: 1000, reason: "x"}) { id } }`},
				{"setStock", `mutation { setStock(input: {itemId: ` + id + `, stock: 1000, expectedVersion: 1, reason: "x"}) { id } }`},
				{"stocktake", `mutation { stocktake(input: {itemId: ` + id + `, countedStock: 1000, reason: "x"}) { id } }`},
				{"refundOrder", `mutation { refundOrder(orderSn: "` + sn + `", reason: "x") { status } }`},
				{"stockLedger", `{ stockLedger(itemId: ` + id + `) { edges { cursor } } }`},
				{"stockReconciliation", `{ stockReconciliation { itemId } }`},
			} {
				wantCode(t, c.name+" as a customer", s.Query(t, alice, c.q, nil), "FORBIDDEN")
			}

			// costPrice: never for customers or anonymous callers, on any path to a SKU.
			for _, tok := range []string{"", alice} {
				for _, q := range []string{
					`{ goods(id: 1) { skus(includeDisabled: true) { costPrice } skuBySelection(specValueIds: ["1", "6"]) { costPrice } } }`,
					`{ goodsList(first: 10) { edges { node { skus { costPrice } } } } }`,
				} {
					r := s.Query(t, tok, q, nil)
					if len(r.Errors) > 0 || bytes.Contains(bytes.ReplaceAll(r.Data, []byte(`"costPrice":null`), nil), []byte("costPrice")) {
						t.Errorf("costPrice visible to %q: %s %+v", tok, r.Data, r.Errors)
					}
				}
			}

			injectionRoundTrips(t, s, spec, id, alice)

			// Bodies over the limits are refused before anything parses them.
			big := bytes.Repeat([]byte("x"), 2<<20)
			for _, path := range []string{"/payments/mock/notify", "/graphql"} {
				resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(big))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge {
					t.Errorf("POST %s with 2 MiB: %d, want 413", path, resp.StatusCode)
				}
			}
			// The webhook's own limit (64 KiB) is below the GraphQL one.
			resp, err := http.Post(s.URL+"/payments/mock/notify", "application/json", bytes.NewReader(big[:100<<10]))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("notification of 100 KiB: %d, want 413", resp.StatusCode)
			}
			if v := metricValue(t, s, `storefront_payment_notifications_total{outcome="too_large"}`); v != "2" {
				t.Errorf("too_large notifications counted %q, want 2", v)
			}
		})
	}
}

// injectionRoundTrips puts the injection string in every text input and
// reads each back verbatim, through the API where it shows and from the
// database where it does not (remark, idempotency key).
func injectionRoundTrips(t *testing.T, s *Server, spec, itemID, customer string) {
	t.Helper()
	create := `mutation($in: CreateGoodsInput!) { createGoods(input: $in) {
	  id name code specs { name values { name } } skus { id skuCode specValueStr } } }`
	g := must[struct {
		ID, Name, Code string
		Specs          []struct {
			Name   string
			Values []struct{ Name string }
		}
		Skus []struct{ ID, SkuCode, SpecValueStr string }
	}](t, s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{
		"name": injection, "code": injection, "status": "ON_SHELF",
		"specs":      []any{map[string]any{"name": injection, "values": []string{injection, injection + "2"}}},
		"defaultSku": map[string]any{"sellPrice": "1.00", "stock": 5},
		"skus":       []any{map[string]any{"values": []string{injection}, "sellPrice": "1.00", "skuCode": injection, "stock": 5}},
	}}), "createGoods")
	if g.Name != injection || g.Code != injection || g.Specs[0].Name != injection || g.Specs[0].Values[0].Name != injection ||
		g.Skus[0].SpecValueStr != injection || g.Skus[0].SkuCode != injection {
		t.Errorf("goods with the injection string came back as %+v", g)
	}

	adjust := `mutation($in: AdjustStockInput!) { adjustStock(input: $in) { stock } }`
	must[struct{ Stock int }](t, s.Query(t, s.AdminToken, adjust, map[string]any{"in": map[string]any{
		"itemId": itemID, "delta": 1, "reason": injection, "bizSn": injection}}), "adjustStock")
	found := false
	for _, e := range ledgerOf(t, s, itemID).StockLedger.Edges {
		found = found || e.Node.BizSn == injection
	}
	if !found {
		t.Errorf("no ledger row with bizSn %q", injection)
	}

	key := injection + " key"
	order := `mutation($items: [OrderItemInput!]!, $key: String, $remark: String) {
	  placeOrder(input: {items: $items, remark: $remark}, idempotencyKey: $key) { orderSn } }`
	vars := map[string]any{"items": []map[string]any{{"itemId": itemID, "quantity": 1}}, "key": key, "remark": injection}
	var first, replay struct{ PlaceOrder struct{ OrderSn string } }
	decode(t, s.Query(t, customer, order, vars), &first)
	decode(t, s.Query(t, customer, order, vars), &replay)
	if replay.PlaceOrder.OrderSn != first.PlaceOrder.OrderSn {
		t.Errorf("replay with the injection key: %s, then %s", first.PlaceOrder.OrderSn, replay.PlaceOrder.OrderSn)
	}
	if r := s.Query(t, customer, `query($sn: String!) { order(orderSn: $sn) { orderSn } }`, map[string]any{"sn": injection}); string(r.Data) != `{"order":null}` {
		t.Errorf("order(orderSn: injection): %s %+v", r.Data, r.Errors)
	}
	wantCode(t, "cancelOrder(orderSn: injection)", s.Query(t, customer, `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`, map[string]any{"sn": injection}), "NOT_FOUND")

	db, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var remark, stored string
	if err := db.SQL.QueryRow("SELECT remark FROM orders WHERE order_sn = ?", first.PlaceOrder.OrderSn).Scan(&remark); err != nil || remark != injection {
		t.Errorf("stored remark %q (%v), want %q", remark, err, injection)
	}
	if err := db.SQL.QueryRow("SELECT `key` FROM idempotency_key WHERE order_sn = ?", first.PlaceOrder.OrderSn).Scan(&stored); err != nil || stored != key {
		t.Errorf("stored idempotency key %q (%v), want %q", stored, err, key)
	}
	var skus int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM sku").Scan(&skus); err != nil || skus == 0 {
		t.Errorf("sku table after the injection attempts: %d rows, %v", skus, err)
	}
	if out, ok := reconcileCLI(t, spec); !ok {
		t.Errorf("reconcile after the injection attempts:\n%s", out)
	}
}
