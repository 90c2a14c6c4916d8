package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Lock at order (issue 17): placeOrder on a hot SKU of a lock-at-order goods
// raises lock_stock by CAS on available stock (stock - lock_stock) and books
// no ledger row; its payment turns the lock into the deduction (change type
// 2). Sections 6 and 7 measure both against the deduct-at-order hot SKU in
// the same run.

// newLockSKU creates a one-SKU goods sold lock-at-order, priced like the hot
// T-shirt SKU, and returns its SKU. It goes through the catalog as an admin
// would (create, then setGoodsStockMode).
func newLockSKU(ctx context.Context, db *store.DB) (int64, error) {
	cat := catalog.New(db, catalog.DefaultConfig())
	p := money.MustParse("109.00")
	g, err := cat.Create(ctx, catalog.CreateInput{Name: "锁定库存压测", Code: "BENCH-LOCK", Status: enums.GoodsOnShelf,
		DefaultSku: catalog.SkuTerms{SellPrice: p, LineationPrice: p, CostPrice: p / 2}})
	if err != nil {
		return 0, err
	}
	if _, err := cat.SetStockMode(ctx, g.ID, enums.LockAtOrder); err != nil {
		return 0, err
	}
	return db.Client.Sku.Query().Where(sku.GoodsID(g.ID)).OnlyID(ctx)
}

// skuState is one SKU's books.
type skuState struct{ stock, locked, ledger int64 }

func (b *bench) skuState(id int64) (skuState, error) {
	var s skuState
	err := b.db.SQL.QueryRow("SELECT stock, lock_stock, (SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ?) FROM sku WHERE id = ?", id, id).
		Scan(&s.stock, &s.locked, &s.ledger)
	return s, err
}

// reconciled runs inventory's reconciliation (ledger and locks) and reports
// the differences it finds on ids. The raw CAS's SKU is off its ledger until
// the end of the run, so a whole-table answer would not be clean.
func (b *bench) reconciled(ids ...int64) (string, bool, error) {
	d, err := inventory.New(b.db).Reconcile(context.Background(), 10000)
	if err != nil {
		return "", false, err
	}
	var bad []string
	for _, x := range d {
		if slices.Contains(ids, x.ItemID) {
			bad = append(bad, fmt.Sprintf("SKU %d diff %+d lockDiff %+d", x.ItemID, x.Diff, x.LockDiff))
		}
	}
	if len(bad) == 0 {
		return "reconcile clean", true, nil
	}
	return "reconcile: " + strings.Join(bad, ", "), false, nil
}

// lockPair measures placeOrder on the lock-mode hot SKU (the paths asked
// for) and, as the reference of the ratio, the deduct-mode hot SKU's
// group path, in interleaved half-length slices (deduct, lock group, lock
// plain, lock plain, lock group, deduct: each arm weighs the same on the
// machine's drift). Then the books: the lock SKU's stock did not move, its
// lock rose by the lock orders accepted, the deduct SKU fell by its own,
// both ledgers sum to their stock, reconciliation (ledger and locks) is
// clean on both.
func (b *bench) lockPair(transport string, clients int, paths []string) (map[string]result, error) {
	type arm struct {
		name, path string
		ids        []int64
	}
	arms := []arm{{"deduct", "group", []int64{b.hot}}}
	for _, p := range []string{"group", "plain"} {
		if slices.Contains(paths, p) {
			arms = append(arms, arm{p, p, []int64{b.lock}})
		}
	}
	rev := slices.Clone(arms)
	slices.Reverse(rev)
	lock0, err := b.skuState(b.lock)
	if err != nil {
		return nil, err
	}
	hot0, err := b.skuState(b.hot)
	if err != nil {
		return nil, err
	}
	orders0, err := b.count("SELECT COUNT(*) FROM orders")
	if err != nil {
		return nil, err
	}
	slicesOf := map[string][]window{}
	batches, batched, accepted := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, a := range slices.Concat(arms, rev) {
		svc := b.svc[a.path]
		bat0, ord0 := svc.GroupStats()
		w, err := b.loop(clients, b.dur/2, b.placeOp(a.path, transport, a.ids))
		if err != nil {
			return nil, fmt.Errorf("lock/%s/%s/%d: %w", a.name, transport, clients, err)
		}
		bat1, ord1 := svc.GroupStats()
		slicesOf[a.name] = append(slicesOf[a.name], w)
		batches[a.name] += bat1 - bat0
		batched[a.name] += ord1 - ord0
		accepted[a.name] += w.done
	}
	lock1, err := b.skuState(b.lock)
	if err != nil {
		return nil, err
	}
	hot1, err := b.skuState(b.hot)
	if err != nil {
		return nil, err
	}
	orders1, err := b.count("SELECT COUNT(*) FROM orders")
	if err != nil {
		return nil, err
	}
	rec, clean, err := b.reconciled(b.lock, b.hot)
	if err != nil {
		return nil, err
	}
	locks := accepted["group"] + accepted["plain"]
	ok := lock1.stock == lock0.stock && lock1.locked-lock0.locked == locks && lock1.ledger == lock1.stock &&
		hot0.stock-hot1.stock == accepted["deduct"] && hot1.ledger == hot1.stock &&
		orders1-orders0 == locks+accepted["deduct"] && clean
	mark := "ok"
	if !ok {
		mark = "FAILED"
	}
	check := fmt.Sprintf("%s: lock SKU accepted %d, locked +%d, stock %d (−%d), ledger %d; deduct SKU accepted %d, stock −%d, ledger = stock %v; orders +%d; %s",
		mark, locks, lock1.locked-lock0.locked, lock1.stock, lock0.stock-lock1.stock, lock1.ledger,
		accepted["deduct"], hot0.stock-hot1.stock, hot1.ledger == hot1.stock, orders1-orders0, rec)
	out := map[string]result{}
	for _, a := range arms {
		r := stats(slicesOf[a.name]...)
		r.batches, r.batched, r.check, r.ok = batches[a.name], batched[a.name], check, ok
		out[a.name] = r
	}
	return out, nil
}

// pool is a supply of placed, unpaid orders of one mode for the payment
// runs: a payment needs an order of its own, so the pool is topped up
// between measured slices, never during one.
type pool struct {
	mode   string
	item   int64
	orders []placedOrder
	next   atomic.Int64
	placed int64 // orders placed into it in all
}

type placedOrder struct{ sn, amount, currency string }

var errPoolDry = errors.New("the payment pool ran dry inside a slice: raise -pay-pool")

// topUp places orders (group path, 64 at a time, in process) until at
// least n are unpaid in the pool.
func (b *bench) topUp(p *pool, n int) error {
	left := p.orders[min(int(p.next.Load()), len(p.orders)):]
	p.orders = slices.Clone(left)
	p.next.Store(0)
	need := n - len(p.orders)
	if need <= 0 {
		return nil
	}
	got := make([]placedOrder, need)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	var idx atomic.Int64
	for range 64 {
		wg.Go(func() {
			for {
				i := int(idx.Add(1)) - 1
				if i >= need {
					return
				}
				item := p.item
				o, err := b.svc["group"].Place(context.Background(), checkout.PlaceInput{UserID: "bench-pay",
					IdempotencyKey: fmt.Sprint("bench-pay-", b.seq.Add(1)), Items: []checkout.ItemInput{{ItemID: &item, Quantity: 1}}})
				if err != nil {
					mu.Lock()
					firstErr = firstOf(firstErr, err)
					mu.Unlock()
					return
				}
				got[i] = placedOrder{o.OrderSn, o.Amount.String(), o.Currency}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("placing the %s payment pool: %w", p.mode, firstErr)
	}
	p.orders = append(p.orders, got...)
	p.placed += int64(need)
	return nil
}

func firstOf(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// payOp pays the pool's next order with a real signed SUCCESS notification
// through payments.Service.Notify, in process: signature, parse, the
// order's lookup, and the notification's transaction (payment_event,
// payment upsert, settle, checkout.PayTx with, for a lock-mode order, the
// line's LOCKED → DEDUCTED CAS, the SKU's lock → deduction CAS and its
// change-type-2 row).
func (b *bench) payOp(p *pool) func() error {
	return func() error {
		i := int(p.next.Add(1)) - 1
		if i >= len(p.orders) {
			return errPoolDry
		}
		o := p.orders[i]
		n := b.seq.Add(1)
		body, err := json.Marshal(mock.Notification{EventID: fmt.Sprint("bench-ev-", n), PaymentID: fmt.Sprint("bench-pay-", n),
			OrderSn: o.sn, Amount: o.amount, Currency: o.currency, MerchantID: benchMerchant, Status: "SUCCESS", Timestamp: time.Now().Unix()})
		if err != nil {
			return err
		}
		out, err := b.pays.Notify(context.Background(), "bench", mock.Header(mock.Sign(benchSecret, body)), body)
		if err != nil {
			return err
		}
		if out != payments.OutcomeApplied {
			return fmt.Errorf("payment of %s: %s, want applied", o.sn, out)
		}
		return nil
	}
}

const (
	benchSecret   = "bench-payment-secret"
	benchMerchant = "bench-merchant"
)

// payRun measures the payment transition at clients closed-loop clients,
// deduct-mode and lock-mode orders of the two hot SKUs, in interleaved
// half-length slices (deduct, lock, lock, deduct), the pools topped up
// between slices. Then the books: every payment paid its order once
// (orders PAID and OrderPaid events up by the payments), the lock SKU's
// stock and lock each fell by its payments with one change-type-2 row
// each, both ledgers sum to the stock, reconciliation is clean on both.
func (b *bench) payRun(clients int, pools map[string]*pool, poolMin int) (map[string]result, error) {
	lock0, err := b.skuState(b.lock)
	if err != nil {
		return nil, err
	}
	placed0 := pools["lock"].placed
	counts := func() ([3]int64, error) {
		var c [3]int64
		for i, q := range []string{"SELECT COUNT(*) FROM orders WHERE status = 'PAID'",
			"SELECT COUNT(*) FROM outbox WHERE type = '" + checkout.EventOrderPaid + "'",
			fmt.Sprintf("SELECT COUNT(*) FROM stock_log WHERE item_id = %d AND change_type = %d", b.lock, inventory.PaymentDeduct)} {
			n, err := b.count(q)
			if err != nil {
				return c, err
			}
			c[i] = n
		}
		return c, nil
	}
	c0, err := counts()
	if err != nil {
		return nil, err
	}
	slicesOf := map[string][]window{}
	paid := map[string]int64{}
	slice := 300*time.Millisecond + b.dur/2
	for _, mode := range []string{"deduct", "lock", "lock", "deduct"} {
		p := pools[mode]
		// Enough for the slice at 1.5 × the fastest rate seen so far.
		need := poolMin
		for _, ws := range slicesOf {
			if r := stats(ws...).rate; r > 0 {
				need = max(need, int(1.5*r*slice.Seconds()))
			}
		}
		if err := b.topUp(p, need); err != nil {
			return nil, err
		}
		w, err := b.loop(clients, b.dur/2, b.payOp(p))
		if err != nil {
			return nil, fmt.Errorf("pay/%s/in-process/%d: %w", mode, clients, err)
		}
		slicesOf[mode] = append(slicesOf[mode], w)
		paid[mode] += w.done
	}
	lock1, err := b.skuState(b.lock)
	if err != nil {
		return nil, err
	}
	c1, err := counts()
	if err != nil {
		return nil, err
	}
	hot1, err := b.skuState(b.hot)
	if err != nil {
		return nil, err
	}
	rec, clean, err := b.reconciled(b.lock, b.hot)
	if err != nil {
		return nil, err
	}
	all := paid["deduct"] + paid["lock"]
	lockPlaced := pools["lock"].placed - placed0
	ok := c1[0]-c0[0] == all && c1[1]-c0[1] == all && c1[2]-c0[2] == paid["lock"] &&
		lock0.stock-lock1.stock == paid["lock"] && lock1.locked-lock0.locked == lockPlaced-paid["lock"] &&
		lock1.ledger == lock1.stock && hot1.ledger == hot1.stock && clean
	mark := "ok"
	if !ok {
		mark = "FAILED"
	}
	check := fmt.Sprintf("%s: paid %d (PAID +%d, OrderPaid +%d); lock SKU: %d paid, stock −%d, type-2 rows +%d, locked %+d (%d placed − %d paid), ledger = stock %v; %s",
		mark, all, c1[0]-c0[0], c1[1]-c0[1], paid["lock"], lock0.stock-lock1.stock, c1[2]-c0[2],
		lock1.locked-lock0.locked, lockPlaced, paid["lock"], lock1.ledger == lock1.stock, rec)
	out := map[string]result{}
	for _, mode := range []string{"deduct", "lock"} {
		r := stats(slicesOf[mode]...)
		r.check, r.ok = check, ok
		out[mode] = r
	}
	return out, nil
}
