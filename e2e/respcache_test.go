package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/testsupport/testdb"
)

// The product page the mixed-load test reads.
const rcPage = `query($id: ID!) { goods(id: $id) { id version priceRange { min max } totalStock skus { id sellPrice stock } } }`

// rcGet sends query as an Apollo client does over GET: the hash alone,
// and on PERSISTED_QUERY_NOT_FOUND hash and query. It returns the last
// answer's status, headers and body.
func rcGet(ctx context.Context, base, token, query string, vars map[string]any, hdr map[string]string) (int, http.Header, []byte, error) {
	sum := sha256.Sum256([]byte(query))
	ext, _ := json.Marshal(map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}})
	q := url.Values{"extensions": {string(ext)}}
	if vars != nil {
		v, _ := json.Marshal(vars)
		q.Set("variables", string(v))
	}
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/graphql?"+q.Encode(), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := loadClient.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, nil, nil, err
		}
		if attempt == 0 && bytes.Contains(body, []byte("PERSISTED_QUERY_NOT_FOUND")) {
			q.Set("query", query)
			continue
		}
		return resp.StatusCode, resp.Header, body, nil
	}
}

// cents parses a Money string.
func cents(m string) int64 {
	whole, frac, _ := strings.Cut(m, ".")
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f
}

// The mixed load, through the binary with its default response
// cache, on SQLite and MariaDB: anonymous page reads over 12 goods (POST
// and APQ GET), stock-moving orders, and an admin price edit every
// second. No read that starts after an edit was acknowledged returns a
// price older than that edit; the cache served many of the reads.
func TestResponseCacheMixedLoad(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			const n = 12
			type target struct {
				id, sku string // the goods, and its SKU whose price the admin raises
				acked   atomic.Int64
			}
			goods := make([]*target, n)
			create := `mutation($in: CreateGoodsInput!) { createGoods(input: $in) { id skus { id } } }`
			for i := range goods {
				g := must[struct {
					ID   string
					Skus []struct{ ID string }
				}](t, s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{
					"name": fmt.Sprintf("混合负载 %d", i), "code": fmt.Sprintf("RC-MIX-%d", i), "status": "ON_SHELF",
					"specs":      []map[string]any{{"name": "颜色", "values": []string{"红", "蓝"}}, {"name": "尺码", "values": []string{"S", "M"}}},
					"defaultSku": map[string]any{"sellPrice": "100.00", "stock": 1000000},
				}}), "createGoods")
				goods[i] = &target{id: g.ID, sku: g.Skus[0].ID}
				goods[i].acked.Store(cents("100.00"))
			}

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			var reads, gets, orders, older atomic.Int64
			var failMu sync.Mutex
			var failures []string
			fail := func(format string, args ...any) {
				failMu.Lock()
				defer failMu.Unlock()
				if len(failures) < 10 {
					failures = append(failures, fmt.Sprintf(format, args...))
				}
			}
			for w := range 8 {
				// A customer per worker, as the fault suites' load has: one
				// subject placing orders as fast as 8 loops can (up to ~750 a
				// second) is a load test, not a shopper, and would meet the
				// per-account rate limit (docs/operations.md, "Rate limits").
				buyer := tokenFor(t, fmt.Sprintf("rc-mix-%d", w), auth.Customer)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ctx.Err() == nil; i++ {
						g := goods[(w*7+i)%n]
						if i%10 == 9 { // 10 %: an order that moves stock
							items := []map[string]any{{"itemId": g.sku, "quantity": 1}}
							r, _, err := post(ctx, s.URL, buyer, fmt.Sprintf("rc-mix-%s-%d-%d", b, w, i),
								`mutation($items: [OrderItemInput!]!) { placeOrder(input: {items: $items}) { orderSn } }`, map[string]any{"items": items})
							if err == nil && len(r.Errors) == 0 {
								orders.Add(1)
							} else if ctx.Err() == nil {
								fail("placeOrder: %v %+v", err, r)
							}
							continue
						}
						floor := g.acked.Load() // acknowledged before this read starts
						vars := map[string]any{"id": g.id}
						var data json.RawMessage
						if i%2 == 0 {
							r, _, err := post(ctx, s.URL, "", "", rcPage, vars)
							if err != nil || len(r.Errors) > 0 {
								if ctx.Err() == nil {
									fail("POST page: %v %+v", err, r)
								}
								continue
							}
							data = r.Data
						} else {
							status, _, body, err := rcGet(ctx, s.URL, "", rcPage, vars, nil)
							var r Response
							if err != nil || status != 200 || json.Unmarshal(body, &r) != nil || len(r.Errors) > 0 {
								if ctx.Err() == nil {
									fail("GET page: %d %v %s", status, err, body)
								}
								continue
							}
							data = r.Data
							gets.Add(1)
						}
						var p struct {
							Goods struct {
								Skus []struct{ ID, SellPrice string }
							}
						}
						if err := json.Unmarshal(data, &p); err != nil {
							fail("decoding %s: %v", data, err)
							continue
						}
						reads.Add(1)
						for _, sk := range p.Goods.Skus {
							if sk.ID == g.sku && cents(sk.SellPrice) < floor {
								older.Add(1)
								fail("goods %s: a read started after the edit to %d cents was acknowledged shows %s", g.id, floor, sk.SellPrice)
							}
						}
					}
				}()
			}
			// The admin: a price edit every second, each acknowledged only
			// when its answer arrives.
			edits := 0
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for done := false; !done; {
				select {
				case <-ctx.Done():
					done = true
				case <-tick.C:
					g := goods[edits%n]
					price := cents("100.00") + int64(edits+1)*100
					for {
						cur := must[struct {
							Skus []struct {
								ID      string
								Version int
							}
						}](t, s.Query(t, s.AdminToken, `query($id: ID!) { goods(id: $id) { skus { id version } } }`, map[string]any{"id": g.id}), "goods")
						version := 0
						for _, sk := range cur.Skus {
							if sk.ID == g.sku {
								version = sk.Version
							}
						}
						r := s.Query(t, s.AdminToken, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`, map[string]any{"in": map[string]any{
							"itemId": g.sku, "expectedVersion": version, "sellPrice": fmt.Sprintf("%d.00", price/100)}})
						if r.Code() == "VERSION_CONFLICT" {
							continue // an order moved its stock meanwhile
						}
						if len(r.Errors) > 0 {
							t.Fatalf("updateSku: %+v", r.Errors)
						}
						break
					}
					g.acked.Store(price)
					edits++
				}
			}
			wg.Wait()
			for _, f := range failures {
				t.Error(f)
			}
			hits, _ := strconv.Atoi(metricValue(t, s, "storefront_response_cache_hits_total"))
			stale, _ := strconv.Atoi(metricValue(t, s, "storefront_response_cache_stale_total"))
			t.Logf("%d reads (%d over GET), %d orders, %d edits; response cache: %d hits, %d stale", reads.Load(), gets.Load(), orders.Load(), edits, hits, stale)
			if older.Load() > 0 {
				t.Errorf("%d reads returned a price older than the last acknowledged edit", older.Load())
			}
			if edits < 3 || orders.Load() == 0 || reads.Load() < 100 || gets.Load() == 0 {
				t.Errorf("too little load to prove anything: %d edits, %d orders, %d reads", edits, orders.Load(), reads.Load())
			}
			if hits == 0 || stale == 0 {
				t.Errorf("the response cache was not exercised: %d hits, %d stale answers", hits, stale)
			}
		})
	}
}

// HTTP caching through the binary: the APQ GET of a product page has a
// strong ETag and Cache-Control public, max-age=<--stock-ttl>, and
// If-None-Match answers 304; a token's answer is private, no-store. With
// --response-cache=false the same requests are executed (same bytes, no
// ETag) and /metrics has no response cache.
func TestResponseCacheOverHTTP(t *testing.T) {
	ctx := context.Background()
	vars := map[string]any{"id": "1"}
	on := Start(t, testdb.Spec(t, testdb.SQLite), "--stock-ttl", "5s")
	status, h, body, err := rcGet(ctx, on.URL, "", rcPage, vars, nil)
	if err != nil || status != 200 {
		t.Fatalf("%d %v %s", status, err, body)
	}
	tag := h.Get("ETag")
	if !strings.HasPrefix(tag, `"`) || h.Get("Cache-Control") != "public, max-age=5" {
		t.Errorf("APQ GET: ETag %q, Cache-Control %q; want a strong tag and public, max-age=5", tag, h.Get("Cache-Control"))
	}
	// The Set of the first answer is applied asynchronously: await the hit.
	// A 304 alone does not say it: an executed answer with the same tag is
	// a 304 too.
	for i := 0; ; i++ {
		status, h, body, err = rcGet(ctx, on.URL, "", rcPage, vars, map[string]string{"If-None-Match": tag})
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusNotModified && metricValue(t, on, "storefront_response_cache_hits_total") != "0" || i == 100 {
			break
		}
	}
	if status != http.StatusNotModified || len(body) != 0 || h.Get("ETag") != tag {
		t.Errorf("If-None-Match with the page's tag: %d, %d body bytes, ETag %q", status, len(body), h.Get("ETag"))
	}
	if metricValue(t, on, "storefront_response_cache_hits_total") == "0" {
		t.Error("the 304 was not counted as a hit")
	}
	status, h, _, _ = rcGet(ctx, on.URL, on.CustomerToken, rcPage, vars, nil)
	if status != 200 || h.Get("Cache-Control") != "private, no-store" || h.Get("ETag") != "" {
		t.Errorf("with a token: %d, Cache-Control %q, ETag %q", status, h.Get("Cache-Control"), h.Get("ETag"))
	}
	r, _, _ := post(ctx, on.URL, on.CustomerToken, "", rcPage, vars)
	if r == nil || len(r.Errors) > 0 {
		t.Errorf("POST with a token: %+v", r)
	}

	off := Start(t, testdb.Spec(t, testdb.SQLite), "--response-cache=false")
	_, _, cached, _ := rcGet(ctx, on.URL, "", rcPage, vars, nil)
	status, h, plain, err := rcGet(ctx, off.URL, "", rcPage, vars, nil)
	if err != nil || status != 200 || h.Get("ETag") != "" || !bytes.Equal(plain, cached) {
		t.Errorf("--response-cache=false: %d %v, ETag %q, same bytes %v", status, err, h.Get("ETag"), bytes.Equal(plain, cached))
	}
	if v := metricValue(t, off, "storefront_response_cache_hits_total"); v != "" {
		t.Errorf("--response-cache=false still exports the cache's counters: hits %s", v)
	}
}
