package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mixLoad is issue 21's mixed load on one binary: page reads of 12 goods of
// 12 SKUs (10 000 000 units each, created here), orders of one unit of
// their SKUs by a customer (each with its own Idempotency-Key), and an
// admin raising one of their prices a cent every second.
type mixLoad struct {
	b            *testing.B
	addr         string
	admin        string
	goods        []mixGoods
	orderHeaders []string // Authorization: the customer
	orderSeq     atomic.Int64
}

type mixGoods struct {
	id, sku string
	read    []byte // the goods' page, as leanPost built it
}

const orderQuery = `mutation($items: [OrderItemInput!]!) { placeOrder(input: {items: $items}) { orderSn } }`

func newMixLoad(b *testing.B, addr, admin, customer string) *mixLoad {
	m := &mixLoad{b: b, addr: addr, admin: admin, orderHeaders: []string{"Authorization", "Bearer " + customer}}
	for i := range 12 {
		var g struct {
			CreateGoods struct {
				ID    string
				Specs []struct{ Values []struct{ ID string } }
				Skus  []struct{ ID string }
			}
		}
		err := gql(b, addr, admin, `mutation($in: CreateGoodsInput!) { createGoods(input: $in) { id specs { values { id } } skus { id } } }`, map[string]any{"in": map[string]any{
			"name": fmt.Sprintf("混合 %d", i), "code": fmt.Sprintf("BENCH-MIX-%d", i), "status": "ON_SHELF",
			"specs":      []map[string]any{{"name": "颜色", "values": []string{"黑", "白", "蓝"}}, {"name": "尺码", "values": []string{"S", "M", "L", "XL"}}},
			"defaultSku": map[string]any{"sellPrice": "99.00", "stock": 10_000_000},
		}}, &g)
		if err != nil {
			b.Fatal(err)
		}
		c := g.CreateGoods
		body, _ := json.Marshal(map[string]any{"query": PageQuery, "variables": map[string]any{"id": c.ID, "sel": []string{c.Specs[0].Values[0].ID}}})
		m.goods = append(m.goods, mixGoods{id: c.ID, sku: c.Skus[0].ID, read: leanPost(addr, "/graphql", body)})
	}
	return m
}

// goodsOrNone is m's goods; none when m is nil (no such load).
func (m *mixLoad) goodsOrNone() []mixGoods {
	if m == nil {
		return nil
	}
	return m.goods
}

// order is a new order of one unit of the i-th goods' SKU.
func (m *mixLoad) order(i int) []byte {
	g := m.goods[i%len(m.goods)]
	raw, _ := json.Marshal(map[string]any{"query": orderQuery, "variables": map[string]any{"items": []map[string]any{{"itemId": g.sku, "quantity": 1}}}})
	return leanPost(m.addr, "/graphql", raw, append(m.orderHeaders, "Idempotency-Key", fmt.Sprintf("bench-%d", m.orderSeq.Add(1)))...)
}

func isOrder(req []byte) bool { return bytes.Contains(req, []byte("placeOrder")) }

// sameConnection is the mix as first measured: every connection sends
// nine page reads, then an order, and again. A connection's order (on
// SQLite it queues on the one writer) keeps that connection's next read
// from being sent: its reads wait on its writes in the client.
func (m *mixLoad) sameConnection() func(conn, i int) []byte {
	return func(conn, i int) []byte {
		if i%10 == 9 {
			return m.order(conn + i)
		}
		return m.goods[(conn*5+i)%len(m.goods)].read
	}
}

// split is the mix as a storefront sees it: readers connections that only
// read pages, placers connections that only place orders, and a gate
// keeping the requests sent at 9 page reads to 1 order. Buyers reading pages
// are not the connections of buyers checking out, so no read waits for an
// order in the client; but when one side is slower, the gate holds the
// other (a read waits only when orders lag 10 % behind, an order when
// reads do), so the mix stays 90/10 by request count however fast either
// side is.
func (m *mixLoad) split(readers, placers int) (*ratioGate, func(conn, i int) []byte) {
	g := newRatioGate(9, placers)
	return g, func(conn, i int) []byte {
		if conn >= readers {
			g.wait(false)
			return m.order(conn + i)
		}
		g.wait(true)
		return m.goods[(conn*5+i)%len(m.goods)].read
	}
}

// editEverySecond raises one goods' price a cent a second until stop.
func (m *mixLoad) editEverySecond(stop <-chan struct{}) (edits int, err error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return edits, nil
		case <-tick.C:
		}
		g := m.goods[edits%len(m.goods)]
		for {
			var cur struct {
				Goods struct {
					Skus []struct {
						ID, SellPrice string
						Version       int
					}
				}
			}
			if err := gql(m.b, m.addr, m.admin, `query($id: ID!) { goods(id: $id) { skus { id sellPrice version } } }`, map[string]any{"id": g.id}, &cur); err != nil {
				return edits, err
			}
			s := cur.Goods.Skus[0]
			price, _ := strconv.ParseFloat(s.SellPrice, 64)
			err := gql(m.b, m.addr, m.admin, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { id } }`, map[string]any{"in": map[string]any{
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

// ratioGate keeps the requests started at per reads to one order, give or
// take slack orders: a read may start while reads-per·orders < per·slack,
// an order while per·orders-reads < per·slack. One of the two always
// holds, so the gate cannot stop both sides. It also counts how long each
// side waited: the side that waits is held by the other's pace.
//
// A start wakes at most one waiter of each side, and only one that may
// go; it wakes the next. (Waking all of them on every start cost the
// client more CPU than the server's cached answers, on the same 2 cores.)
type ratioGate struct {
	mu                  sync.Mutex
	readCond, orderCond *sync.Cond
	per, slack          int64
	reads, orders       int64
	open                bool // released: the measured interval is over
	readWaiting         int
	orderWaiting        int
	readWait, orderWait time.Duration
}

func newRatioGate(per, slack int) *ratioGate {
	g := &ratioGate{per: int64(per), slack: int64(max(slack, 1))}
	g.readCond, g.orderCond = sync.NewCond(&g.mu), sync.NewCond(&g.mu)
	return g
}

// may says whether a read (or an order) may start now; g.mu held.
func (g *ratioGate) may(read bool) bool {
	if read {
		return g.open || g.reads-g.per*g.orders < g.per*g.slack
	}
	return g.open || g.per*g.orders-g.reads < g.per*g.slack
}

func (g *ratioGate) wait(read bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.may(read) {
		t0 := time.Now()
		for !g.may(read) {
			if read {
				g.readWaiting++
				g.readCond.Wait()
				g.readWaiting--
			} else {
				g.orderWaiting++
				g.orderCond.Wait()
				g.orderWaiting--
			}
		}
		if read {
			g.readWait += time.Since(t0)
		} else {
			g.orderWait += time.Since(t0)
		}
	}
	if read {
		g.reads++
	} else {
		g.orders++
	}
	if g.readWaiting > 0 && g.may(true) {
		g.readCond.Signal()
	}
	if g.orderWaiting > 0 && g.may(false) {
		g.orderCond.Signal()
	}
}

// release lets every waiter go: the load is over.
func (g *ratioGate) release() {
	g.mu.Lock()
	g.open = true
	g.readCond.Broadcast()
	g.orderCond.Broadcast()
	g.mu.Unlock()
}

// waited is how long readers and placers waited at the gate in all.
func (g *ratioGate) waited() (reads, orders time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readWait, g.orderWait
}

// The gate keeps the mix at 9 reads to 1 order whichever side is slower,
// and never stops both: readers and placers of very different speeds run
// against it while a checker sees every start.
func TestRatioGate(t *testing.T) {
	for _, tc := range []struct {
		name                string
		readTook, orderTook time.Duration
		readers, placers    int
	}{
		{name: "slow orders", readTook: 0, orderTook: time.Millisecond, readers: 8, placers: 2},
		{name: "slow reads", readTook: time.Millisecond, orderTook: 0, readers: 2, placers: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const slack = 2
			g := newRatioGate(9, slack)
			var reads, orders atomic.Int64
			var worst atomic.Int64 // the largest |reads - 9·orders| seen at a start
			stop := make(chan struct{})
			var wg sync.WaitGroup
			side := func(read bool, took time.Duration) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					g.wait(read)
					if read {
						reads.Add(1)
					} else {
						orders.Add(1)
					}
					select {
					case <-stop:
						return // past the run: the released gate lets everyone go
					default:
					}
					d := reads.Load() - 9*orders.Load()
					for w := worst.Load(); max(d, -d) > w && !worst.CompareAndSwap(w, max(d, -d)); w = worst.Load() {
					}
					if took > 0 {
						time.Sleep(took) // the request's service time in this model
					}
				}
			}
			for range tc.readers {
				wg.Add(1)
				go side(true, tc.readTook)
			}
			for range tc.placers {
				wg.Add(1)
				go side(false, tc.orderTook)
			}
			time.Sleep(200 * time.Millisecond) // a fixed run, not a wait for an event
			close(stop)
			g.release()
			wg.Wait()
			// A start is counted here just after the gate counted it: the
			// starts between the two (a read each, 9 per order) add to the
			// gate's own bound.
			bound := int64(9*slack + tc.readers + 9*tc.placers)
			if w := worst.Load(); w > bound {
				t.Errorf("reads and 9×orders drifted %d apart (bound %d)", w, bound)
			}
			if reads.Load() < 90 || orders.Load() < 10 {
				t.Errorf("a side stalled: %d reads, %d orders", reads.Load(), orders.Load())
			}
			rw, ow := g.waited()
			t.Logf("%d reads, %d orders; readers held %v, placers held %v", reads.Load(), orders.Load(), rw, ow)
		})
	}
}
