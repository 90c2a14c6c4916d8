package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// BenchmarkPlaceOrder measures placeOrder on one hot SKU (the demo 黑色/L with
// a huge stock) at 1, 16 and 64 closed-loop clients, in process through the
// service and through the real HTTP handler, and reports orders/s, p50 and
// p99. Each order carries its own Idempotency-Key, as a real client's would.
// Both paths: plain (GroupCommit off) and group commit (the default).
// MariaDB when STOREFRONT_TEST_MYSQL_DSN is set; SQLite always. The whole
// table with ratios is `go run ./bench/checkout` (docs/benchmarks.md).
//
// Compare with ../shared/bench/hotrow (go run . -mode=checkout -c=64) run in
// the same session: see docs/checkout.md.
func BenchmarkPlaceOrder(b *testing.B) {
	for _, backend := range []testdb.Backend{testdb.MySQL, testdb.SQLite} {
		b.Run(string(backend), func(b *testing.B) {
			db := testdb.Open(b, backend)
			hot := benchSetup(b, db)
			for _, path := range []string{"plain", "group"} {
				cfg := checkout.DefaultConfig()
				cfg.GroupCommit = path == "group"
				h := benchHandler(b, db, cfg)
				svc := h.app.Checkout
				for _, c := range []int{1, 16, 64} {
					b.Run(fmt.Sprintf("%s/service/clients=%d", path, c), func(b *testing.B) {
						run(b, c, func(i int64) error {
							_, err := svc.Place(context.Background(), checkout.PlaceInput{
								UserID: "bench", IdempotencyKey: fmt.Sprint("svc-", i),
								Items: []checkout.ItemInput{{ItemID: &hot, Quantity: 1}},
							})
							return err
						})
					})
					b.Run(fmt.Sprintf("%s/http/clients=%d", path, c), func(b *testing.B) {
						run(b, c, func(i int64) error { return h.place(hot, fmt.Sprint("http-", i)) })
					})
				}
			}
		})
	}
}

// keySeq numbers orders across every run of every sub-benchmark: the
// framework calls each one several times with growing b.N, and a repeated
// key would measure a replay instead of an order.
var keySeq atomic.Int64

// run executes b.N orders on c goroutines and reports throughput and latency.
func run(b *testing.B, c int, place func(i int64) error) {
	var next atomic.Int64
	lat := make([][]time.Duration, c)
	var failed atomic.Int64
	var firstErr atomic.Value
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if next.Add(1) > int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := place(keySeq.Add(1)); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d orders failed, first: %v", n, b.N, firstErr.Load())
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "orders/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99_ms")
}

func benchSetup(b *testing.B, db *store.DB) int64 {
	ctx := context.Background()
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(ctx, cat)
	if err != nil {
		b.Fatal(err)
	}
	hot, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("黑色,L")).OnlyID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// A stock no run can exhaust, booked in the ledger like any adjustment.
	if _, err := db.SQL.Exec("UPDATE sku SET stock = stock + 100000000 WHERE id = ?", hot); err != nil {
		b.Fatal(err)
	}
	if _, err := db.SQL.Exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
		"SELECT id, goods_id, 5, 100000000, stock - 100000000, stock, 'manual', 'bench', '', ? FROM sku WHERE id = ?", time.Now().UTC(), hot); err != nil {
		b.Fatal(err)
	}
	return hot
}

type benchHTTP struct {
	app        *app.App
	url, token string
	client     *http.Client
	handler    http.Handler
}

func benchHandler(b *testing.B, db *store.DB, cfg checkout.Config) *benchHTTP {
	signer, err := auth.NewSigner("bench-secret-0123456789")
	if err != nil {
		b.Fatal(err)
	}
	token, err := signer.Issue("bench", auth.Customer, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	c := app.DefaultConfig()
	c.Checkout = cfg
	a := app.New(db, nil, signer, c)
	b.Cleanup(a.Close)
	h := a.Handler()
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return &benchHTTP{app: a, url: srv.URL + "/graphql", token: token, handler: h,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}}
}

const benchMutation = `mutation($id: ID!) { placeOrder(input: {items: [{itemId: $id, quantity: 1}]}) { orderSn amount } }`

func (h *benchHTTP) request(item int64, key string) *http.Request {
	body, _ := json.Marshal(map[string]any{"query": benchMutation, "variables": map[string]any{"id": fmt.Sprint(item)}})
	req, _ := http.NewRequest("POST", h.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Idempotency-Key", key)
	return req
}

// place sends one placeOrder over a loopback socket.
func (h *benchHTTP) place(item int64, key string) error {
	resp, err := h.client.Do(h.request(item, key))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return checkResponse(raw)
}

// serve calls the handler in process: no client, no socket.
func (h *benchHTTP) serve(item int64, key string) error {
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, h.request(item, key))
	return checkResponse(rec.Body.Bytes())
}

func checkResponse(raw []byte) error {
	var r struct{ Errors []json.RawMessage }
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 {
		return fmt.Errorf("placeOrder: %s", raw)
	}
	return nil
}
