package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"storefront/internal/app"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

type cellKey struct {
	skus, path, transport string
	clients               int
}

type result struct {
	rate, p50, p99   float64
	selfUS, dbUS     float64 // CPU per call: this process, the database server (0: not seen)
	batches, batched int64
	check            string
	ok               bool
}

type bench struct {
	db     *store.DB
	hot    int64
	cas    int64 // the SKU the raw CAS runs take from
	lock   int64 // the hot SKU of a lock-at-order goods (issue 17)
	pays   *payments.Service
	spread []int64
	dur    time.Duration
	svc    map[string]*checkout.Service
	url    map[string]string
	token  string
	signer *auth.Signer
	client *http.Client
	bodies map[int64][]byte       // the placeOrder request of each SKU
	lean   map[string]*leanClient // per path; nil: Go's net/http client
	seq    atomic.Int64
}

// newBench wires a plain and a group-commit checkout service on the same
// database, each behind its own real handler (server.New, as serve does) on a
// loopback httptest server.
func newBench(db *store.DB, hot, cas, lock int64, spread []int64, dur time.Duration) *bench {
	signer, err := auth.NewSigner("bench-secret-0123456789")
	if err != nil {
		panic(err)
	}
	token, err := signer.Issue("bench", auth.Customer, time.Hour)
	if err != nil {
		panic(err)
	}
	b := &bench{db: db, hot: hot, cas: cas, lock: lock, spread: spread, dur: dur, token: token, signer: signer,
		svc: map[string]*checkout.Service{}, url: map[string]string{}, lean: map[string]*leanClient{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}, bodies: map[int64][]byte{}}
	for _, id := range append([]int64{hot, lock}, spread...) {
		b.bodies[id] = placeBody(id)
	}
	for _, path := range []string{"plain", "group"} {
		cfg := app.DefaultConfig()
		cfg.Checkout.GroupCommit = path == "group"
		cfg.Checkout.GroupInFlight, cfg.Checkout.GroupMax, cfg.Checkout.PoolBatchMax = groupInFlight, groupMax, poolBatchMax
		cfg.Payments = cfg.Payments.With(mock.New("bench", benchSecret, benchMerchant, "CNY"))
		cfg.Tracing = benchTracing
		sf := app.New(db, nil, signer, cfg)
		b.svc[path], b.url[path] = sf.Checkout, httptest.NewServer(sf.Handler()).URL+"/graphql"
		if path == "group" {
			b.pays = sf.Payments
		}
		if loadClient == "lean" {
			if b.lean[path], err = newLeanClient(b.url[path], token, 256); err != nil {
				panic(err)
			}
		}
	}
	return b
}

// window is one measured slice: latencies of the calls that finished
// inside it, its length, and how many calls succeeded in all (warm-up
// included: the correctness check counts them).
type window struct {
	lat  []time.Duration
	dur  time.Duration
	done int64
	cpu  cpuSample // used inside the slice
}

// loop runs c closed-loop clients for a 300 ms warm-up and then dur.
func (b *bench) loop(c int, dur time.Duration, op func() error) (window, error) {
	const warm = 300 * time.Millisecond
	start := time.Now()
	from, to := start.Add(warm), start.Add(warm+dur)
	lat := make([][]time.Duration, c)
	var done atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	var cpu cpuSample
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(time.Until(from))
		a := sampleCPU()
		time.Sleep(time.Until(to))
		b := sampleCPU()
		cpu = cpuSample{self: b.self - a.self, db: b.db - a.db}
	}()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(to) {
					return
				}
				if err := op(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
				// Calls finishing inside the window count, whenever they began:
				// a stall (the shared disk's fsync) must show, not vanish.
				if t1 := time.Now(); t1.After(from) && !t1.After(to) {
					lat[w] = append(lat[w], t1.Sub(t0))
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return window{}, err
	}
	return window{lat: slices.Concat(lat...), dur: dur, done: done.Load(), cpu: cpu}, nil
}

// stats merges slices into calls/s (over their total length), p50 and p99.
func stats(ws ...window) result {
	var all []time.Duration
	var dur time.Duration
	var cpu cpuSample
	for _, w := range ws {
		all, dur = append(all, w.lat...), dur+w.dur
		cpu.self, cpu.db = cpu.self+w.cpu.self, cpu.db+w.cpu.db
	}
	if len(all) == 0 {
		return result{}
	}
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(len(all)) }
	return result{rate: float64(len(all)) / dur.Seconds(), p50: ms(all[len(all)/2]), p99: ms(all[len(all)*99/100]),
		selfUS: us(cpu.self), dbUS: us(cpu.db)}
}

// rawCAS is the statement every one-row-per-order design repeats: its rate is
// the ceiling of such designs on this database.
func (b *bench) rawCAS(c int) result {
	w, err := b.loop(c, b.dur, b.casOp)
	if err != nil {
		panic(err)
	}
	return stats(w)
}

// casOp is one raw CAS on the bench's CAS SKU.
func (b *bench) casOp() error {
	res, err := b.db.SQL.Exec("UPDATE sku SET stock = stock - 1, stock_version = stock_version + 1 WHERE id = ? AND stock >= 1", b.cas)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("raw CAS: %d rows", n)
	}
	return nil
}

// pair measures the plain and the group path on the same SKUs, transport and
// clients, and the raw CAS at the same number of clients, in interleaved
// half-length slices (raw, plain, group, group, plain, raw), so that the
// machine's drifting load weighs on all alike and every ratio compares runs
// a few seconds apart. Then it checks the books: every accepted order took
// exactly its unit, the ledger matches the stock, no SKU is negative.
func (b *bench) pair(skus, transport string, clients int, paths []string) (map[string]result, error) {
	ids := []int64{b.hot}
	if skus != "hot" {
		ids = b.spread
	}
	stock0, err := b.stockSum(ids)
	if err != nil {
		return nil, err
	}
	orders0, err := b.count("SELECT COUNT(*) FROM orders")
	if err != nil {
		return nil, err
	}
	slicesOf := map[string][]window{}
	batches, batched := map[string]int64{}, map[string]int64{}
	rev := slices.Clone(paths)
	slices.Reverse(rev)
	order := slices.Concat([]string{"raw"}, paths, rev, []string{"raw"})
	var accepted int64
	for _, path := range order {
		if path == "raw" {
			if !withRaw {
				continue
			}
			w, err := b.loop(clients, b.dur/2, b.casOp)
			if err != nil {
				return nil, fmt.Errorf("raw CAS: %w", err)
			}
			slicesOf[path] = append(slicesOf[path], w)
			continue
		}
		svc := b.svc[path]
		bat0, ord0 := svc.GroupStats()
		w, err := b.loop(clients, b.dur/2, b.placeOp(path, transport, ids))
		if err != nil {
			return nil, fmt.Errorf("%s/%s/%s/%d: %w", skus, path, transport, clients, err)
		}
		bat1, ord1 := svc.GroupStats()
		slicesOf[path] = append(slicesOf[path], w)
		batches[path] += bat1 - bat0
		batched[path] += ord1 - ord0
		accepted += w.done
	}
	stock1, err := b.stockSum(ids)
	if err != nil {
		return nil, err
	}
	orders1, err := b.count("SELECT COUNT(*) FROM orders")
	if err != nil {
		return nil, err
	}
	ledger, err := b.ledgerSum(ids)
	if err != nil {
		return nil, err
	}
	neg, err := b.count("SELECT COUNT(*) FROM sku WHERE stock < 0")
	if err != nil {
		return nil, err
	}
	ok := stock0-stock1 == accepted && orders1-orders0 == accepted && ledger == stock1 && neg == 0
	mark := "ok"
	if !ok {
		mark = "FAILED"
	}
	check := fmt.Sprintf("%s: accepted %d, orders +%d, stock %d (−%d), ledger sum %d, negative-stock SKUs %d",
		mark, accepted, orders1-orders0, stock1, stock0-stock1, ledger, neg)
	out := map[string]result{"raw": stats(slicesOf["raw"]...)}
	for _, path := range paths {
		r := stats(slicesOf[path]...)
		r.batches, r.batched, r.check, r.ok = batches[path], batched[path], check, ok
		out[path] = r
	}
	return out, nil
}

// placeOp is one closed-loop client's call: placeOrder of one unit on the
// path's service, in process or over HTTP, order i on SKU ids[i mod n],
// each with its own Idempotency-Key.
func (b *bench) placeOp(path, transport string, ids []int64) func() error {
	svc := b.svc[path]
	return func() error {
		n := b.seq.Add(1)
		item := ids[int(n)%len(ids)]
		key := fmt.Sprint("bench-", n)
		if transport == "http" {
			if lean := b.lean[path]; lean != nil {
				return lean.post(b.bodies[item], key)
			}
			return b.placeHTTP(b.url[path], item, key)
		}
		_, err := svc.Place(context.Background(), checkout.PlaceInput{
			UserID: "bench", IdempotencyKey: key, Items: []checkout.ItemInput{{ItemID: &item, Quantity: 1}},
		})
		return err
	}
}

const mutation = `mutation($id: ID!) { placeOrder(input: {items: [{itemId: $id, quantity: 1}]}) { orderSn amount } }`

// placeHTTP posts one placeOrder. The load generator shares the machine
// with the server and the database, so it does as little as it can: the body
// is the same for every order of a SKU (only the key header differs), and the
// answer is checked for an order number and no error without decoding it.
func (b *bench) placeHTTP(url string, item int64, key string) error {
	body := b.bodies[item]
	if body == nil {
		panic(fmt.Sprint("no request body for SKU ", item))
	}
	return postOrder(b.client, url, b.token, key, body)
}

func placeBody(item int64) []byte {
	body, _ := json.Marshal(map[string]any{"query": mutation, "variables": map[string]any{"id": fmt.Sprint(item)}})
	return body
}

func (b *bench) stockSum(ids []int64) (int64, error) {
	return b.sum("SELECT COALESCE(SUM(stock), 0) FROM sku WHERE id IN ", ids)
}

func (b *bench) ledgerSum(ids []int64) (int64, error) {
	return b.sum("SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id IN ", ids)
}

func (b *bench) sum(q string, ids []int64) (int64, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var n int64
	err := b.db.SQL.QueryRow(q+"("+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+")", args...).Scan(&n)
	return n, err
}

func (b *bench) count(q string) (int64, error) {
	var n int64
	err := b.db.SQL.QueryRow(q).Scan(&n)
	return n, err
}

// runHotrow runs the anchor program in mode against the same server and
// returns its ops/s line and rate.
func runHotrow(dir, dsn, mode string, c int, dur time.Duration) (string, float64, error) {
	cmd := exec.Command("go", "run", ".", "-mode="+mode, fmt.Sprint("-c=", c), "-dur="+dur.String(), "-dsn", dsn)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", 0, fmt.Errorf("hotrow: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`ops/s=\s*([0-9.]+).*`).FindSubmatch(out)
	if m == nil {
		return "", 0, fmt.Errorf("no ops/s in hotrow output:\n%s", out)
	}
	rate, err := strconv.ParseFloat(string(m[1]), 64)
	return string(m[0]), rate, err
}
