//go:build galera

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/wait"
)

// One instance per node, a hot SKU sold through all three: every buyer
// gets an order or OUT_OF_STOCK (certification conflicts are retried, never
// shown), exactly the stock is sold, and every node agrees on stock, ledger
// and orders; then three dispatchers each sent every event once, and an
// order placed through one node reads back through the others.
func TestGaleraHotSKU(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	const stockTTL = time.Second
	// Dispatch passes every 20 ms: three dispatchers often look at the same rows.
	servers := serveOnEach(t, specs, "--stock-ttl", stockTTL.String(), "--outbox-interval", "20ms")
	dbs := openEach(t, specs)

	const buyers, workers = 1000, 64
	hot := skuBySpec(t, dbs[0], "黑色,L")
	setStock(t, servers[0], dbs[0], hot, 200)
	ta := crowd(t, servers, "stock200", buyers, workers, one(hot))
	t.Logf("stock 200, 1000 buyers round-robin over 3 nodes: %v; conflicts retried %d", ta, retried(t, servers))
	if ta.ok.Load() != 200 || ta.outOfStock.Load() != buyers-200 || len(ta.codes) != 0 {
		t.Errorf("stock 200: %v; want 200 orders and 800 OUT_OF_STOCK, nothing else", ta)
	}
	agree(t, "after stock 200", specs, dbs, map[string]int{hot: 0}, 200)
	for i, db := range dbs {
		if got := dbInt(t, db, "SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE change_type = 1 AND item_id = "+hot); got != -200 {
			t.Errorf("node %d: the orders' ledger rows sum to %d, want -200", i+1, got)
		}
	}

	big := skuBySpec(t, dbs[0], "黑色,M")
	setStock(t, servers[1], dbs[1], big, buyers)
	ta = crowd(t, servers, "stock1000", buyers, workers, one(big))
	t.Logf("stock 1000, 1000 buyers round-robin over 3 nodes: %v; conflicts retried so far %d", ta, retried(t, servers))
	if ta.ok.Load() != buyers || len(ta.codes) != 0 || ta.outOfStock.Load() != 0 {
		t.Errorf("stock 1000: %v; want 1000 orders, none refused", ta)
	}
	agree(t, "after stock 1000", specs, dbs, map[string]int{hot: 0, big: 0}, 200+buyers)

	// Three dispatchers: every event handed to the broker once, by one of them.
	wait.Within(t, "every event dispatched", 60*time.Second, func() bool {
		return dbInt(t, dbs[0], "SELECT COUNT(*) FROM outbox WHERE dispatched_at IS NULL") == 0
	})
	events := dbInt(t, dbs[0], "SELECT COALESCE(SUM(events), 0) FROM outbox")
	sent, by := 0, []int{}
	for _, s := range servers {
		n, _ := strconv.Atoi(metricValue(t, s, `storefront_events_dispatched_total{lane="broker"}`))
		sent += n
		by = append(by, n)
	}
	t.Logf("events: %d committed, dispatched %v by the three instances", events, by)
	if events < 200+buyers || sent != events {
		t.Errorf("events: %d committed (want ≥ %d), %d sent by the three dispatchers %v; want each sent once", events, 200+buyers, sent, by)
	}

	// Read-your-write through another node (wsrep_sync_wait=1 in the DSN).
	own := skuBySpec(t, dbs[0], "白色,L")
	setStock(t, servers[2], dbs[2], own, 1000)
	readsOwnWrite(t, servers, own, 100)
	cartReadsOwnWrite(t, servers, own, 30)

	editSeenOnNode3(t, servers, dbs, own, stockTTL, 5)
}

// editSeenOnNode3 edits a SKU's price through instance 1 n times and waits
// each time for instance 3's product page, whose cache holds the old price,
// to show it: within the stock TTL plus a margin for a loaded machine. It
// logs the worst case.
func editSeenOnNode3(t *testing.T, servers []*Server, dbs []*store.DB, id string, ttl time.Duration, n int) {
	t.Helper()
	goods := fmt.Sprint(dbInt(t, dbs[0], "SELECT goods_id FROM sku WHERE id = "+id))
	priceOn := func(s *Server) string {
		var g struct {
			Goods struct {
				Skus []struct{ ID, SellPrice string }
			}
		}
		decode(t, s.Query(t, "", `query($id: ID!) { goods(id: $id) { skus { id sellPrice } } }`, map[string]any{"id": goods}), &g)
		for _, k := range g.Goods.Skus {
			if k.ID == id {
				return k.SellPrice
			}
		}
		t.Fatalf("SKU %s not on goods %s's page", id, goods)
		return ""
	}
	var worst time.Duration
	for i := range n {
		priceOn(servers[2]) // node 3's cache holds the price before the edit
		price := fmt.Sprintf("%d.00", 70+i)
		version := dbInt(t, dbs[0], "SELECT version FROM sku WHERE id = "+id)
		must[struct{ SellPrice string }](t, servers[0].Query(t, servers[0].AdminToken, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`,
			map[string]any{"in": map[string]any{"itemId": id, "expectedVersion": version, "sellPrice": price}}), "updateSku")
		edited := time.Now()
		wait.Within(t, "the new price through node 3", ttl+3*time.Second, func() bool { return priceOn(servers[2]) == price })
		worst = max(worst, time.Since(edited))
	}
	t.Logf("a price edited through node 1 showed through node 3 within %v at worst of %d edits (stock TTL %v)", worst.Round(time.Millisecond), n, ttl)
}

// readsOwnWrite places n orders through instance 1 and reads each at once
// through instances 2 and 3: every read finds it.
func readsOwnWrite(t *testing.T, servers []*Server, id string, n int) {
	t.Helper()
	token := tokenFor(t, "reader", auth.Customer)
	missing := 0
	for i := range n {
		r, _, err := post(context.Background(), servers[0].URL, token, fmt.Sprintf("ryw-%d", i), placeOrder,
			map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
		if err != nil || len(r.Errors) > 0 {
			t.Fatalf("order %d through node 1: %v %+v", i, err, r)
		}
		var p placed
		decode(t, r, &p)
		for _, s := range servers[1:] {
			var got struct{ Order *struct{ OrderSn string } }
			decode(t, s.Query(t, token, `query($sn: String!) { order(orderSn: $sn) { orderSn } }`, map[string]any{"sn": p.PlaceOrder.OrderSn}), &got)
			if got.Order == nil {
				missing++
			}
		}
	}
	t.Logf("read-your-write: %d of %d reads through nodes 2 and 3 missed the order", missing, 2*n)
	if missing != 0 {
		t.Errorf("%d of %d reads through another node missed an order just placed", missing, 2*n)
	}
}

// The same Idempotency-Key sent to all three instances at once, 20 times:
// one order each time, and every answer that is an order is that order.
func TestGaleraIdempotencyKeyOnThreeNodes(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	servers := serveOnEach(t, specs)
	dbs := openEach(t, specs)
	id := skuBySpec(t, dbs[0], "黑色,L")
	const rounds = 20
	for round := range rounds {
		token := tokenFor(t, fmt.Sprintf("idem-%d", round), auth.Customer)
		key := fmt.Sprintf("same-key-%d", round)
		sns := make([]string, len(servers))
		var wg sync.WaitGroup
		for i, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// IDEMPOTENCY_IN_PROGRESS while another node holds the key: a
				// client retries; the answer then is the one order.
				for try := 0; try < 50; try++ {
					r, _, err := post(context.Background(), s.URL, token, key, placeOrder,
						map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
					switch {
					case err != nil:
						sns[i] = "transport: " + err.Error()
						return
					case len(r.Errors) == 0:
						var p placed
						if err := jsonUnmarshal(r.Data, &p); err != nil {
							sns[i] = err.Error()
							return
						}
						sns[i] = p.PlaceOrder.OrderSn
						return
					case r.Code() == "IDEMPOTENCY_IN_PROGRESS":
						time.Sleep(20 * time.Millisecond)
					default:
						sns[i] = r.Code() + ": " + r.Errors[0].Message
						return
					}
				}
			}()
		}
		wg.Wait()
		if sns[0] == "" || sns[0] != sns[1] || sns[1] != sns[2] {
			t.Errorf("round %d: the three answers %q; want one order", round, sns)
		}
	}
	agree(t, "after the keys", specs, dbs, map[string]int{id: 200 - rounds}, rounds)
}

// Two closers on two nodes race over 300 orders that expire: each closed
// and its stock restored once, on every node.
func TestGaleraClosersRace(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	closing := []string{"--order-ttl", "2s", "--close-interval", "300ms"}
	servers := []*Server{Start(t, specs[0], closing...), Start(t, specs[1], closing...)}
	dbs := openEach(t, specs)
	id := skuBySpec(t, dbs[0], "黑色,L")
	setStock(t, servers[0], dbs[0], id, 1000)
	const orders = 300
	ta := crowd(t, servers, "expiring", orders, 16, one(id))
	if ta.ok.Load() != orders || len(ta.codes) != 0 {
		t.Fatalf("placing the orders to expire: %v", ta)
	}
	wait.Within(t, "every order closed", 60*time.Second, func() bool {
		return dbInt(t, dbs[0], "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0
	})
	for i, db := range dbs {
		if n := dbInt(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"); n != orders {
			t.Errorf("node %d: %d closed orders, want %d", i+1, n, orders)
		}
		if n := dbInt(t, db, "SELECT COUNT(*) FROM (SELECT biz_sn FROM stock_log WHERE change_type = 3 GROUP BY biz_sn HAVING COUNT(*) <> 1) twice"); n != 0 {
			t.Errorf("node %d: %d orders restored more than once", i+1, n)
		}
		if n := dbInt(t, db, "SELECT COUNT(DISTINCT biz_sn) FROM stock_log WHERE change_type = 3"); n != orders {
			t.Errorf("node %d: %d orders restored, want %d", i+1, n, orders)
		}
	}
	var closed []int
	sum := func() int {
		closed = closed[:0]
		n := 0
		for _, s := range servers {
			v, _ := strconv.Atoi(metricValue(t, s, `storefront_orders_closed_total{cause="timeout"}`))
			closed = append(closed, v)
			n += v
		}
		return n
	}
	wait.Within(t, "the closers' counts", 10*time.Second, func() bool { return sum() >= orders })
	t.Logf("timeout closes by the two closers: %v", closed)
	if sum() != orders {
		t.Errorf("closed %v = %d, want %d (each once)", closed, sum(), orders)
	}
	agree(t, "after closing", specs, dbs, map[string]int{id: 1000}, orders)
}

// The writer node cut off from the cluster under load: the writes move to
// the next node of the list and every instance goes on selling, the cut
// node's own instance included (its orders go through the writer); that
// instance's own reads and writes (a cart) answer UNAVAILABLE and its
// /readyz 503 until the node rejoins (IST); then the writes move back, and
// all three agree.
func TestGaleraNodeIsolated(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	servers := serveOnEach(t, specs)
	dbs := openEach(t, specs)
	id := skuBySpec(t, dbs[0], "黑色,L")
	setStock(t, servers[1], dbs[1], id, 100000)
	const cut = 0 // node 1: the first of the list, the writer
	t.Cleanup(func() {
		// Whatever happened, the node goes back: the next test needs three.
		_, _ = c.admin[cut].Exec("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
		wait.Within(t, "node 1 back in the cluster", 90*time.Second, func() bool {
			size, state, _, err := c.status(cut)
			return err == nil && size == 3 && state == "Synced"
		})
	})

	// Load on every instance, each answer counted by instance and phase.
	type key struct {
		inst  int
		phase string
		code  string
	}
	var mu sync.Mutex
	counts := map[key]int{}
	firstMsg := map[key]string{}
	phase := "before"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 12 {
		inst := w % 3
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := tokenFor(t, fmt.Sprintf("iso-%d", w), auth.Customer)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				sentIn := phase // the phase the request was sent in
				mu.Unlock()
				r, _, err := post(context.Background(), servers[inst].URL, token, fmt.Sprintf("iso-%d-%d", w, i), placeOrder,
					map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
				code, msg := "ok", ""
				switch {
				case err != nil:
					code, msg = "transport", err.Error()
				case len(r.Errors) > 0:
					code, msg = r.Code(), r.Errors[0].Message
				}
				mu.Lock()
				// An answer to a request in flight when the phase changed
				// belongs to neither: a transition.
				k := key{inst, sentIn, code}
				if phase != sentIn {
					k.phase = sentIn + "→" + phase
				}
				counts[k]++
				if _, ok := firstMsg[k]; !ok {
					firstMsg[k] = msg
				}
				mu.Unlock()
				if code != "ok" {
					time.Sleep(20 * time.Millisecond) // a client backs off on an error
				}
			}
		}()
	}
	setPhase := func(p string) {
		mu.Lock()
		phase = p
		mu.Unlock()
	}
	ready := func(s *Server) int {
		resp, err := loadClient.Get(s.URL + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cartCode := func(s *Server) string {
		r, _, err := post(context.Background(), s.URL, tokenFor(t, fmt.Sprintf("iso-cart-%d", time.Now().UnixNano()), auth.Customer), "",
			`mutation($id: ID!) { cartCreate(input: {lines: [{itemId: $id, quantity: 1}]}) { id } }`, map[string]any{"id": id})
		switch {
		case err != nil:
			return "transport: " + err.Error()
		case len(r.Errors) > 0:
			return r.Code()
		}
		return "ok"
	}
	moves := func(s *Server) int {
		return strings.Count(s.stderr.String(), "connections move to another node")
	}
	time.Sleep(2 * time.Second) // load before the cut: a baseline, not a wait for an event

	setPhase("cutting")
	c.isolate(t, cut, true)
	at := time.Now()
	wait.Within(t, "instance 1's /readyz 503", 60*time.Second, func() bool { return ready(servers[cut]) == 503 })
	wait.Within(t, "nodes 2 and 3 a cluster of two", 60*time.Second, func() bool {
		size, state, _, err := c.status(1)
		return err == nil && size == 2 && state == "Synced"
	})
	wait.Within(t, "every instance's writes moved off node 1", 30*time.Second, func() bool {
		for _, s := range servers {
			if moves(s) < 1 {
				return false
			}
		}
		return true
	})
	t.Logf("node 1 isolated: /readyz 503, a primary of two and the writes on node 2 after %v", time.Since(at).Round(time.Millisecond))
	setPhase("isolated")
	time.Sleep(3 * time.Second) // a window of selling with node 1 out
	for i := range servers {
		want, code := 200, ready(servers[i])
		if i == cut {
			want = 503
		}
		if code != want {
			t.Errorf("instance %d's /readyz with node 1 out: %d, want %d", i+1, code, want)
		}
	}
	if code := cartCode(servers[cut]); code != "UNAVAILABLE" {
		t.Errorf("a cart through instance 1 (its own node) with node 1 out: %s, want UNAVAILABLE", code)
	}
	if code := cartCode(servers[1]); code != "ok" {
		t.Errorf("a cart through instance 2 with node 1 out: %s, want a cart", code)
	}

	setPhase("rejoining")
	c.isolate(t, cut, false)
	back := time.Now()
	wait.Within(t, "node 1 Synced in a cluster of three", 90*time.Second, func() bool {
		size, state, _, err := c.status(cut)
		return err == nil && size == 3 && state == "Synced"
	})
	wait.Within(t, "instance 1's /readyz 200", 30*time.Second, func() bool { return ready(servers[cut]) == 200 })
	wait.Within(t, "every instance's writes back on node 1", 30*time.Second, func() bool {
		for _, s := range servers {
			if moves(s) < 2 {
				return false
			}
		}
		return true
	})
	t.Logf("node 1 rejoined, Synced, ready and writing again after %v", time.Since(back).Round(time.Millisecond))
	setPhase("after")
	time.Sleep(2 * time.Second) // a window of selling after the rejoin
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("answers by instance, phase and code: %v", counts)
	for k, n := range counts {
		switch {
		case k.code == "INTERNAL" || k.code == "transport":
			t.Errorf("instance %d, %s: %d answers %s (%s); its log says:\n%s", k.inst+1, k.phase, n, k.code, firstMsg[k],
				logLines(servers[k.inst], "internal error"))
		case (k.phase == "before" || k.phase == "isolated" || k.phase == "after") && k.code != "ok":
			t.Errorf("instance %d, %s: %d answers %s (%s), want orders; its log says:\n%s", k.inst+1, k.phase, n, k.code, firstMsg[k],
				logLines(servers[k.inst], "database unavailable"))
		}
	}
	for inst := range servers {
		for _, p := range []string{"before", "isolated", "after"} {
			if counts[key{inst, p, "ok"}] == 0 {
				t.Errorf("instance %d sold nothing %s", inst+1, p)
			}
		}
	}
	orders := dbInt(t, dbs[1], "SELECT COUNT(*) FROM orders")
	agree(t, "after the rejoin", specs, dbs, map[string]int{id: 100000 - orders}, orders)
}

// retried is the transactions the instances retried after a conflict (a
// certification failure is a 1213, counted as a deadlock).
func retried(t *testing.T, servers []*Server) int {
	n := 0
	for _, s := range servers {
		v, _ := strconv.Atoi(metricValue(t, s, `storefront_tx_retries_total{cause="deadlock"}`))
		n += v
	}
	return n
}

// cartReadsOwnWrite makes n carts through instance 1, each then changed
// through instance 1, and reads each right after each write through
// instances 2 and 3: every read shows the write.
func cartReadsOwnWrite(t *testing.T, servers []*Server, id string, n int) {
	t.Helper()
	type cartQ struct {
		ID   string
		Cost struct{ TotalQuantity int }
	}
	read := func(s *Server, cart string) int {
		var got struct{ Cart *cartQ }
		decode(t, s.Query(t, "", `query($id: ID!) { cart(id: $id) { id cost { totalQuantity } } }`, map[string]any{"id": cart}), &got)
		if got.Cart == nil {
			return -1
		}
		return got.Cart.Cost.TotalQuantity
	}
	stale := 0
	for range n {
		var made struct{ CartCreate cartQ }
		decode(t, servers[0].Query(t, "", `mutation($item: ID!) { cartCreate(input: {lines: [{itemId: $item, quantity: 1}]}) { id cost { totalQuantity } } }`,
			map[string]any{"item": id}), &made)
		for _, s := range servers[1:] {
			if read(s, made.CartCreate.ID) != 1 {
				stale++
			}
		}
		var added struct{ CartLinesAdd cartQ }
		decode(t, servers[0].Query(t, "", `mutation($cart: ID!, $item: ID!) { cartLinesAdd(cartId: $cart, lines: [{itemId: $item, quantity: 1}]) { id cost { totalQuantity } } }`,
			map[string]any{"cart": made.CartCreate.ID, "item": id}), &added)
		for _, s := range servers[1:] {
			if read(s, made.CartCreate.ID) != 2 {
				stale++
			}
		}
	}
	t.Logf("cart read-your-write: %d of %d reads through nodes 2 and 3 missed the change", stale, 4*n)
	if stale != 0 {
		t.Errorf("%d of %d cart reads through another node missed a change just made", stale, 4*n)
	}
}
