package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/auth"
)

// benchSecret is the JWT secret the benchmark's binaries run with.
const benchSecret = "bench-secret-0123456789abcdef"

var (
	binOnce sync.Once
	binFile string
	binErr  error
)

// storefrontBinaryWith runs `storefront serve --demo` with extra flags in its
// own process on a fresh SQLite file and returns its address (host:port).
func storefrontBinaryWith(b *testing.B, extra ...string) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "storefront-bench")
		if err != nil {
			binErr = err
			return
		}
		binFile = filepath.Join(dir, "storefront")
		if out, err := exec.Command("go", "build", "-o", binFile, "storefront/cmd/storefront").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building storefront: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		b.Fatal(binErr)
	}
	addr := freeAddr(b)
	args := append([]string{"serve", "--demo", "--addr", addr, "--db", "sqlite:" + filepath.Join(b.TempDir(), "bin.db")}, extra...)
	cmd := exec.Command(binFile, args...)
	cmd.Env = append(os.Environ(), "STOREFRONT_JWT_SECRET="+benchSecret)
	start(b, cmd, "http://"+addr+"/graphql")
	return addr
}

func benchToken(b *testing.B, sub string, role auth.Role) string {
	s, err := auth.NewSigner(benchSecret)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := s.Issue(sub, role, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// gql posts one request with net/http (set-up and the admin's edits, not
// measured) and decodes data into out.
func gql(b *testing.B, addr, token, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%s: %v", r.Errors[0].Extensions["code"], r.Errors[0].Message)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// apqGetPath is the GET an Apollo client sends for a persisted query:
// the hash and the variables only.
func apqGetPath(query string, vars map[string]any, withQuery bool) string {
	sum := sha256.Sum256([]byte(query))
	ext, _ := json.Marshal(map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}})
	v, _ := json.Marshal(vars)
	q := url.Values{"extensions": {string(ext)}, "variables": {string(v)}}
	if withQuery {
		q.Set("query", query)
	}
	return "/graphql?" + q.Encode()
}

func okAnswer(_ []byte, status int, body []byte) error {
	if status != 200 || bytes.Contains(body, []byte(`"errors"`)) {
		return fmt.Errorf("status %d: %.300s", status, body)
	}
	return nil
}

// BenchmarkResponseCache measures issue 21's targets in one run, with the
// lean client (lean_test.go) for every target, 16 connections (wrk -c16 of
// gqlceiling's README), STOREFRONT_BENCH_DUR per target (default 2s) and
// STOREFRONT_BENCH_ROUNDS interleaved rounds (default 3), and prints each
// round's ratios and their medians:
//
//   - the warm 12-SKU page through the binary (POST, and APQ GET with the
//     hash only) against gqlceiling's page (target ≥ 5×) and gqlceiling's
//     { __typename } (≥ 0.5×);
//   - the warm 500-SKU page against the same binary with
//     --response-cache=false, today's path (≥ 20×);
//   - a mixed load (90 % page reads over 12 goods of 12 SKUs, 10 % orders
//     that move their stock, an admin price edit every second) against
//     gqlceiling's page (≥ 2×).
//
// Run it alone: go test -run='^$' -bench=ResponseCache -benchtime=1x ./bench/
func BenchmarkResponseCache(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run of fixed-length rounds: use -benchtime=1x")
	}
	dur := 2 * time.Second
	if d, err := time.ParseDuration(os.Getenv("STOREFRONT_BENCH_DUR")); err == nil {
		dur = d
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("STOREFRONT_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	const conns = 16

	ceilURL := gqlceiling(b)
	ceil := strings.TrimSuffix(strings.TrimPrefix(ceilURL, "http://"), "/graphql")
	on := storefrontBinaryWith(b)
	off := storefrontBinaryWith(b, "--response-cache=false")
	pids[on], pids[off], pids[ceil] = pids["http://"+on+"/graphql"], pids["http://"+off+"/graphql"], pids[ceilURL]

	// Both binaries seed the same demo catalog: the T-shirt is goods 1, the
	// shoe goods 3. The page selects each goods' first value, as page.lua does.
	firstValue := func(addr string, id int) string {
		var g struct {
			Goods struct {
				Specs []struct{ Values []struct{ ID string } }
			}
		}
		if err := gql(b, addr, "", `query($id: ID!) { goods(id: $id) { specs { values { id } } } }`, map[string]any{"id": id}, &g); err != nil {
			b.Fatal(err)
		}
		return g.Goods.Specs[0].Values[0].ID
	}
	pageVars := func(id int, sel string) map[string]any {
		return map[string]any{"id": strconv.Itoa(id), "sel": []string{sel}}
	}
	body := func(vars map[string]any) []byte {
		raw, _ := json.Marshal(map[string]any{"query": pageQuery, "variables": vars})
		return raw
	}
	v12, v500 := pageVars(1, firstValue(on, 1)), pageVars(3, firstValue(on, 3))
	ceilPage := leanPost(ceil, "/graphql", pageBody(1, 11))
	ceilTypename := leanPost(ceil, "/graphql", typenameBody)
	page12, page500 := leanPost(on, "/graphql", body(v12)), leanPost(on, "/graphql", body(v500))
	page12Get := leanGet(on, apqGetPath(pageQuery, v12, false))
	page12Off, page500Off := leanPost(off, "/graphql", body(v12)), leanPost(off, "/graphql", body(v500))

	// The mixed load's 12 goods of 12 SKUs, with stock no order runs out of.
	admin, customer := benchToken(b, "bench-admin", auth.Admin), benchToken(b, "bench-customer", auth.Customer)
	type mixGoods struct {
		id, sku string
		read    []byte
	}
	var mix []mixGoods
	for i := range 12 {
		var g struct {
			CreateGoods struct {
				ID    string
				Specs []struct{ Values []struct{ ID string } }
				Skus  []struct{ ID string }
			}
		}
		err := gql(b, on, admin, `mutation($in: CreateGoodsInput!) { createGoods(input: $in) { id specs { values { id } } skus { id } } }`, map[string]any{"in": map[string]any{
			"name": fmt.Sprintf("混合 %d", i), "code": fmt.Sprintf("BENCH-MIX-%d", i), "status": "ON_SHELF",
			"specs":      []map[string]any{{"name": "颜色", "values": []string{"黑", "白", "蓝"}}, {"name": "尺码", "values": []string{"S", "M", "L", "XL"}}},
			"defaultSku": map[string]any{"sellPrice": "99.00", "stock": 10_000_000},
		}}, &g)
		if err != nil {
			b.Fatal(err)
		}
		c := g.CreateGoods
		mix = append(mix, mixGoods{id: c.ID, sku: c.Skus[0].ID, read: leanPost(on, "/graphql", body(map[string]any{"id": c.ID, "sel": []string{c.Specs[0].Values[0].ID}}))})
	}
	var orderSeq atomic.Int64
	orderQuery := `mutation($items: [OrderItemInput!]!) { placeOrder(input: {items: $items}) { orderSn } }`
	isOrder := func(req []byte) bool { return bytes.Contains(req, []byte("placeOrder")) }
	mixNext := func(conn, i int) []byte {
		if i%10 == 9 {
			g := mix[(conn+i)%len(mix)]
			raw, _ := json.Marshal(map[string]any{"query": orderQuery, "variables": map[string]any{"items": []map[string]any{{"itemId": g.sku, "quantity": 1}}}})
			return leanPost(on, "/graphql", raw, "Authorization", "Bearer "+customer, "Idempotency-Key", fmt.Sprintf("bench-%d", orderSeq.Add(1)))
		}
		return mix[(conn*5+i)%len(mix)].read
	}
	// editEverySecond raises one goods' price a cent a second until stop.
	editEverySecond := func(stop <-chan struct{}) (edits int, err error) {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return edits, nil
			case <-tick.C:
			}
			g := mix[edits%len(mix)]
			for {
				var cur struct {
					Goods struct {
						Skus []struct {
							ID, SellPrice string
							Version       int
						}
					}
				}
				if err := gql(b, on, admin, `query($id: ID!) { goods(id: $id) { skus { id sellPrice version } } }`, map[string]any{"id": g.id}, &cur); err != nil {
					return edits, err
				}
				s := cur.Goods.Skus[0]
				price, _ := strconv.ParseFloat(s.SellPrice, 64)
				err := gql(b, on, admin, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { id } }`, map[string]any{"in": map[string]any{
					"itemId": s.ID, "expectedVersion": s.Version, "sellPrice": fmt.Sprintf("%.2f", price+0.01)}}, nil)
				if err == nil {
					break
				}
				if !strings.HasPrefix(err.Error(), "VERSION_CONFLICT") {
					return edits, err
				}
			}
			edits++
		}
	}

	// Warm every target, register the persisted query, and check that the
	// cached binary, the uncached one and (for the 12-SKU page) nothing
	// else differ.
	warm := func(addr string, req []byte) []byte {
		l, err := dialLean(addr)
		if err != nil {
			b.Fatal(err)
		}
		defer l.close()
		var first []byte
		for i := range 20 {
			status, body, err := l.do(req)
			if err == nil {
				err = okAnswer(nil, status, body)
			}
			if err != nil {
				b.Fatalf("%s: %v", addr, err)
			}
			if i == 0 {
				first = bytes.Clone(body)
			}
		}
		return first
	}
	warm(on, leanGet(on, apqGetPath(pageQuery, v12, true)))
	want12, want500 := warm(on, page12), warm(on, page500)
	if got := warm(on, page12Get); !bytes.Equal(got, want12) {
		b.Fatalf("APQ GET and POST answer differently:\n%s\n%s", got, want12)
	}
	if got := warm(off, page12Off); !bytes.Equal(got, want12) {
		b.Fatalf("--response-cache=false answers differently:\n%s\n%s", got, want12)
	}
	if got := warm(off, page500Off); !bytes.Equal(got, want500) {
		b.Fatal("--response-cache=false answers the 500-SKU page differently")
	}
	warm(ceil, ceilPage)
	warm(ceil, ceilTypename)
	for _, g := range mix {
		warm(on, g.read)
	}
	same := func(want []byte) func([]byte, int, []byte) error {
		return func(_ []byte, status int, body []byte) error {
			if status != 200 || !bytes.Equal(body, want) {
				return fmt.Errorf("status %d, %d bytes, not the warm answer: %.200s", status, len(body), body)
			}
			return nil
		}
	}

	type target struct {
		name, addr string
		next       func(conn, i int) []byte
		check      func([]byte, int, []byte) error
		count      func([]byte) bool
		mixed      bool
		conns      int // 0: conns
	}
	fixed := func(req []byte) func(int, int) []byte { return func(int, int) []byte { return req } }
	targets := []target{
		{name: "page12/gqlceiling", addr: ceil, next: fixed(ceilPage), check: okAnswer},
		{name: "typename/gqlceiling", addr: ceil, next: fixed(ceilTypename), check: okAnswer},
		{name: "page12/cached-post", addr: on, next: fixed(page12), check: same(want12)},
		{name: "page12/cached-apq-get", addr: on, next: fixed(page12Get), check: same(want12)},
		{name: "page12/uncached", addr: off, next: fixed(page12Off), check: same(want12)},
		{name: "page500/cached-post", addr: on, next: fixed(page500), check: same(want500)},
		{name: "page500/uncached", addr: off, next: fixed(page500Off), check: same(want500)},
		{name: "mixed/pages", addr: on, next: mixNext, check: okAnswer, count: func(req []byte) bool { return !isOrder(req) }, mixed: true},
		// The same mix from 64 connections: with 16, each connection's
		// order (milliseconds on SQLite's one writer) holds up its next
		// nine pages and the server idles; with 64 it is busy.
		{name: "mixed-64/pages", addr: on, next: mixNext, check: okAnswer, count: func(req []byte) bool { return !isOrder(req) }, mixed: true, conns: 64},
	}
	ratios := []struct{ label, a, c string }{
		{"page12 cached POST / gqlceiling page (target ≥ 5)", "page12/cached-post", "page12/gqlceiling"},
		{"page12 cached APQ GET / gqlceiling page (target ≥ 5)", "page12/cached-apq-get", "page12/gqlceiling"},
		{"page12 cached POST / gqlceiling { __typename } (target ≥ 0.5)", "page12/cached-post", "typename/gqlceiling"},
		{"page12 cached APQ GET / gqlceiling { __typename } (target ≥ 0.5)", "page12/cached-apq-get", "typename/gqlceiling"},
		{"page500 cached / uncached, --response-cache=false (target ≥ 20)", "page500/cached-post", "page500/uncached"},
		{"mixed load page reads / gqlceiling page (target ≥ 2)", "mixed/pages", "page12/gqlceiling"},
		{"mixed load from 64 connections, page reads / gqlceiling page", "mixed-64/pages", "page12/gqlceiling"},
		{"page12 uncached / gqlceiling page (today's path)", "page12/uncached", "page12/gqlceiling"},
		{"page12 cached POST / gqlceiling page, by server CPU per request", "cpu:page12/cached-post", "cpu:page12/gqlceiling"},
	}
	all := make([][]float64, len(ratios))
	for round := range rounds {
		rate, cpu := map[string]float64{}, map[string]float64{}
		for _, t := range targets {
			var stop chan struct{}
			var editc chan int
			var edited error
			if t.mixed {
				stop, editc = make(chan struct{}), make(chan int, 1)
				go func() {
					n, err := editEverySecond(stop)
					edited = err
					editc <- n
				}()
			}
			orders0 := orderSeq.Load()
			var latMu sync.Mutex
			var pageLat, orderLat []time.Duration
			observe := func(req []byte, took time.Duration) {
				latMu.Lock()
				defer latMu.Unlock()
				if isOrder(req) {
					orderLat = append(orderLat, took)
				} else {
					pageLat = append(pageLat, took)
				}
			}
			cpu0, self0 := procCPU(b, pids[t.addr]), procCPU(b, os.Getpid())
			n := conns
			if t.conns > 0 {
				n = t.conns
			}
			r, err := leanLoad(t.addr, n, dur, t.next, t.check, t.count, observe)
			used, client := procCPU(b, pids[t.addr])-cpu0, procCPU(b, os.Getpid())-self0
			if err != nil {
				b.Fatalf("%s: %v", t.name, err)
			}
			rate[t.name] = r
			extra := ""
			if t.mixed {
				close(stop)
				edits := <-editc
				if edited != nil {
					b.Fatalf("admin edit: %v", edited)
				}
				orders := orderSeq.Load() - orders0
				extra = fmt.Sprintf(", %d orders (%.0f/s, p50 %v, p99 %v), %d price edits, server CPU %.0f %% of one core", orders, float64(orders)/dur.Seconds(),
					pct(orderLat, 50), pct(orderLat, 99), edits, 100*used.Seconds()/dur.Seconds())
			} else if pids[t.addr] != 0 && r > 0 {
				cpu[t.name] = float64(used.Microseconds()) / (r * dur.Seconds())
				extra = fmt.Sprintf(", server %.1f µs CPU/request, client %.1f", cpu[t.name], float64(client.Microseconds())/(r*dur.Seconds()))
			}
			fmt.Printf("round %d: %-24s %9.0f req/s (p50 %v, p99 %v)%s\n", round+1, t.name, r, pct(pageLat, 50), pct(pageLat, 99), extra)
		}
		rate["cpu:page12/cached-post"], rate["cpu:page12/gqlceiling"] = cpu["page12/gqlceiling"], cpu["page12/cached-post"]
		for i, d := range ratios {
			if rate[d.a] > 0 && rate[d.c] > 0 {
				all[i] = append(all[i], rate[d.a]/rate[d.c])
				fmt.Printf("round %d: %s = %.2f\n", round+1, d.label, rate[d.a]/rate[d.c])
			}
		}
	}
	for i, d := range ratios {
		if len(all[i]) > 0 {
			s := slices.Clone(all[i])
			slices.Sort(s)
			fmt.Printf("median of %d: %s = %.2f  (rounds: %s)\n", len(s), d.label, s[len(s)/2], fmtRatios(all[i]))
		}
	}
}

// pct is the p-th percentile of ds, rounded for printing.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}

func fmtRatios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
