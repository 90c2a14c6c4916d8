package checkout

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A poison makes an order a row the database refuses (Service.plant): the
// way the NUL remark and invalid UTF-8 key failed their batches,
// planted here so that no input rule at the door can stop it first.
type poison struct {
	name  string
	plant func(o *Order)
}

// poisons are the refusals db's backend has for an order's row: on every
// backend a duplicate order number (a constraint on one row, taken from
// taken, an order already placed), and on the servers a remark their
// columns refuse (PostgreSQL: NUL; MariaDB: a byte that is not UTF-8).
// SQLite stores any text.
func poisons(db *store.DB, taken *Order) []poison {
	ps := []poison{{"duplicate order number", func(o *Order) { o.OrderSn = taken.OrderSn }}}
	switch db.Dialect.Name() {
	case dialect.Postgres:
		ps = append(ps, poison{"NUL in the remark", func(o *Order) { o.Remark = "x\x00" }})
	case dialect.MySQL:
		ps = append(ps, poison{"invalid UTF-8 in the remark", func(o *Order) { o.Remark = "x\xe9" }})
	}
	return ps
}

// plantOn poisons the orders of the buyers for which bad holds.
func plantOn(f *fixture, p poison, bad func(user string) bool) {
	f.svc.plant = func(o *Order) {
		if bad(o.UserID) {
			p.plant(o)
		}
	}
}

// checkRefused checks that err is the database refusing the planted order
// itself, as the plain path answers it: no UNAVAILABLE (which would tell the
// buyer to retry what can never pass), no error of the batch's.
func checkRefused(t *testing.T, f *fixture, what string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: placed, want the database's refusal", what)
	case errors.Is(err, store.ErrUnavailable), !f.svc.batcher.refusedData(err):
		t.Errorf("%s: err = %v, want the database refusing its row (as on the plain path)", what, err)
	}
}

// checkReconciled checks every SKU's stock against its ledger.
func checkReconciled(t *testing.T, f *fixture) {
	t.Helper()
	diffs, err := inventory.New(f.db).Reconcile(context.Background(), 100)
	if err != nil || len(diffs) != 0 {
		t.Errorf("reconcile: %+v (%v), want no difference", diffs, err)
	}
}

// A batch whose statement the database refuses for one order's row places
// every other order of it, and that order gets its own refusal, as the plain
// path gives it (issue 38: one customer's remark failed 41 of 105 others'
// orders INTERNAL on PostgreSQL). Nothing of the refused order is written,
// and its key is not burnt.
func TestGroupBatchIsolatesARefusedOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		taken, err := f.svc.Place(context.Background(), PlaceInput{UserID: "first", Items: []ItemInput{one(id, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		for r, p := range poisons(db, taken) {
			t.Run(p.name, func(t *testing.T) {
				plantOn(f, p, func(user string) bool { return strings.HasSuffix(user, "-bad") })
				stock := f.stock(t, id)
				before := f.counts(t)
				var ins []PlaceInput
				for i := range 5 {
					user := fmt.Sprint("r", r, "u", i)
					if i == 2 {
						user += "-bad"
					}
					ins = append(ins, PlaceInput{UserID: user, IdempotencyKey: "k", Remark: "fine", Items: []ItemInput{one(id, 1)}})
				}
				hold(f, id)
				orders, errs := enqueue(t, f, id, ins)()
				checkOutcomes(t, orders, errs, nil, nil, errs[2], nil, nil)
				checkRefused(t, f, "the planted order", errs[2])
				if got := f.stock(t, id); got != stock-4 {
					t.Errorf("stock = %d, want %d (four orders placed)", got, stock-4)
				}
				after := f.counts(t)
				for tb, d := range map[string]int{"orders": 4, "order_line": 4, "stock_log": 4, "outbox": 4, "idempotency_key": 4} {
					if after[tb]-before[tb] != d {
						t.Errorf("%s: %d new rows, want %d (the refused order leaves none)", tb, after[tb]-before[tb], d)
					}
				}
				checkReconciled(t, f)
				// The refused order's key is free: the same request, no
				// longer refused, is placed.
				f.svc.plant = nil
				if _, err := f.svc.Place(context.Background(), ins[2]); err != nil {
					t.Errorf("the planted order's key again, unplanted: %v", err)
				}
			})
		}
		// Every order whole: its line, ledger row, key and one event (once:
		// links dispatches the events it counts).
		links(t, db)
	})
}

// The reproduction, with real concurrency: rounds of 24 buyers of
// one hot SKU, each a customer of their own, every 8th order one the
// database refuses. Every clean order is placed, each poisoned one gets
// its own refusal, and stock, ledger, keys and events reconcile.
func TestGroupPoisonedOrdersFailOnlyThemselves(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db) // the production defaults: group commit, lone orders as SQLite places them
		id := f.skuID(t, "黑色,L")
		taken, err := f.svc.Place(context.Background(), PlaceInput{UserID: "first", Items: []ItemInput{one(id, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		ps := poisons(db, taken)
		p := ps[len(ps)-1] // the remark on a server, the order number on SQLite
		plantOn(f, p, func(user string) bool { return strings.HasSuffix(user, "-bad") })
		const rounds, crowd = 5, 24
		stock := f.stock(t, id)
		before := f.counts(t)
		batches, _ := f.svc.GroupStats()
		failed := 0
		for r := range rounds {
			orders, errs := make([]*Order, crowd), make([]error, crowd)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range crowd {
				user := fmt.Sprint("r", r, "u", i)
				if i%8 == 7 {
					user += "-bad"
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					orders[i], errs[i] = f.svc.Place(bounded(t), PlaceInput{UserID: user, IdempotencyKey: fmt.Sprint("k", r, "-", i), Remark: "fine", Items: []ItemInput{one(id, 1)}})
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if i%8 == 7 {
					checkRefused(t, f, fmt.Sprint("round ", r, ", poisoned order ", i), err)
					continue
				}
				if err != nil || orders[i] == nil {
					failed++
					t.Errorf("round %d, clean order %d: %v", r, i, err)
				}
			}
		}
		if failed > 0 {
			t.Fatalf("%d of %d clean orders failed (%s)", failed, rounds*crowd*7/8, p.name)
		}
		placed := rounds * crowd * 7 / 8
		if got := f.stock(t, id); got != stock-int64(placed) {
			t.Errorf("stock = %d, want %d", got, stock-int64(placed))
		}
		after := f.counts(t)
		for tb := range after {
			if after[tb]-before[tb] != placed {
				t.Errorf("%s: %d new rows, want %d", tb, after[tb]-before[tb], placed)
			}
		}
		checkReconciled(t, f)
		links(t, db)
		b, _ := f.svc.GroupStats()
		t.Logf("%s: %d transactions for %d orders", p.name, b-batches, rounds*crowd)
	})
}

// Which failures place a batch's orders one by one: a value or a row the
// database refuses, and never a cause of the whole batch (a deadlock or lock
// wait, too many connections, the batch's own guard or deadline check, a
// lost connection, a deadline), which keeps its answer for every order.
func TestGroupMemberFaultIsOnlyARowsFault(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("writing the batch: %w", &pgconn.PgError{Code: code}) }
	my := func(n uint16) error { return fmt.Errorf("writing the batch: %w", &mysql.MySQLError{Number: n}) }
	lost := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	for _, tc := range []struct {
		w    batchWriter
		err  error
		want bool
	}{
		{&postgresWriter{}, pg("22021"), true}, // invalid byte sequence (a bound NUL)
		{&postgresWriter{}, pg("54000"), true}, // chr(0): null character not permitted
		{&postgresWriter{}, pg("22001"), true}, // value too long
		{&postgresWriter{}, pg("23505"), true}, // a duplicate order number
		{&postgresWriter{}, pg("23503"), true},
		{&postgresWriter{}, pg("22012"), false}, // the guard: errStockMoved
		{&postgresWriter{}, pg("22P02"), false}, // the deadline check
		{&postgresWriter{}, pg("40P01"), false}, // deadlock
		{&postgresWriter{}, pg("55P03"), false}, // lock_timeout
		{&postgresWriter{}, pg("53300"), false}, // too many clients
		{&postgresWriter{}, pg("57P01"), false}, // admin shutdown
		{&postgresWriter{}, pg("42P01"), false}, // a statement of ours that is wrong
		{&postgresWriter{}, errors.Join(lost, pg("22021")), false},
		{&mysqlWriter{}, my(1300), true}, // invalid utf8mb4
		{&mysqlWriter{}, my(1366), true},
		{&mysqlWriter{}, my(1406), true},  // data too long
		{&mysqlWriter{}, my(1062), true},  // a duplicate order number
		{&mysqlWriter{}, my(1213), false}, // deadlock
		{&mysqlWriter{}, my(1205), false}, // lock wait timeout
		{&mysqlWriter{}, my(1242), false}, // the guard
		{&mysqlWriter{}, my(1040), false}, // too many connections
		{&mysqlWriter{}, my(1146), false},
		{&mysqlWriter{}, errors.Join(mysql.ErrInvalidConn, my(1300)), false},
	} {
		s := &Service{batcher: &serverBatcher{w: tc.w}}
		if got := s.memberFault(context.Background(), tc.err); got != tc.want {
			t.Errorf("%T: memberFault(%v) = %v, want %v", tc.w, tc.err, got, tc.want)
		}
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	s := &Service{batcher: &serverBatcher{w: &postgresWriter{}}}
	if s.memberFault(ended, pg("22021")) {
		t.Error("memberFault past the batch's deadline = true, want false: its buyers have their answer")
	}
}
