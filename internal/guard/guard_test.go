package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// The kinds below are of tables no domain package has: a limit the house
// does not have yet is a table, a kind and its owner's code, and no change
// to guard or inventory.
var (
	// budgets: a promotion's discount given, within its budget.
	budgets = &CounterKind{Table: "test_budget", Scope: "promotion_id", Holder: "holder", Units: "given",
		Exceeded: errs.New(errs.Conflict, "the promotion's budget is spent")}
	// balances: what a customer owes, the balance negated; a payment adds
	// its amount within 0.
	balances = &CounterKind{Table: "test_balance", Scope: "currency", Holder: "customer", Units: "owed",
		Exceeded: errs.New(errs.Conflict, "the balance is below the payment")}
	// vouchers: a voucher FREE → HELD by the order that uses it.
	vouchers = &RowClaimKind{Table: "test_voucher", ID: "id", State: "state", Holder: "holder", Free: "FREE", Held: "HELD",
		Lost: errs.New(errs.Conflict, "the voucher was taken")}
)

func createTables(t *testing.T, db *store.DB) {
	t.Helper()
	_, err := db.SQL.ExecContext(context.Background(), "CREATE TABLE test_budget (promotion_id BIGINT NOT NULL, "+
		"holder VARCHAR(64) NOT NULL, given BIGINT NOT NULL, PRIMARY KEY (promotion_id, holder))")
	must.NoErr(t, err)
	_, err = db.SQL.ExecContext(context.Background(), "CREATE TABLE test_balance (currency BIGINT NOT NULL, "+
		"customer VARCHAR(64) NOT NULL, owed BIGINT NOT NULL, PRIMARY KEY (currency, customer))")
	must.NoErr(t, err)
	_, err = db.SQL.ExecContext(context.Background(), "CREATE TABLE test_voucher (id BIGINT NOT NULL PRIMARY KEY, "+
		"state VARCHAR(16) NOT NULL, holder VARCHAR(64))")
	must.NoErr(t, err)
	_, err = db.SQL.ExecContext(context.Background(), "INSERT INTO test_voucher (id, state) VALUES (1, 'FREE'), (2, 'FREE')")
	must.NoErr(t, err)
}

// race runs n transactions at once, each writing what write(i) says, and
// counts those that committed and those refused with want; any other
// error fails the test.
func race(t *testing.T, db *store.DB, n int, want error, write func(ctx context.Context, tx *ent.Tx, i int) error) (ok, refused int) {
	t.Helper()
	results := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = store.WithTx(context.Background(), db, func(ctx context.Context, tx *ent.Tx) error { return write(ctx, tx, i) })
		})
	}
	wg.Wait()
	for i, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, want):
			refused++
		default:
			t.Errorf("transaction %d: %v", i, err)
		}
	}
	return ok, refused
}

func units(t *testing.T, db *store.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.SQL.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// A promotion's budget and a customer's balance are guarded counters of
// their owners' tables: 16 orders racing to give 300 of a budget of 1,000
// give it 3 times, and 16 payments of 300 racing for a balance topped up
// by 1,000 spend it 3 times, on every database.
func TestBudgetAndBalanceAreCounters(t *testing.T) {
	const racers, budget, each = 16, 1000, 300
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		createTables(t, db)
		ok, refused := race(t, db, racers, budgets.Exceeded, func(ctx context.Context, tx *ent.Tx, _ int) error {
			return AddCounters(ctx, tx, []Counter{Add(budgets, 7, "budget", each, budget)})
		})
		if given := units(t, db, "SELECT given FROM test_budget WHERE promotion_id = 7"); ok != 3 || refused != racers-3 || given != 3*each {
			t.Errorf("budget: %d gave, %d refused, %d given; want 3, %d, %d", ok, refused, given, racers-3, 3*each)
		}

		ctx := context.Background()
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			return AddCounters(ctx, tx, []Counter{Add(balances, 156, "alice", -budget, math.MaxInt64)})
		}); err != nil {
			t.Fatalf("topping up: %v", err)
		}
		ok, refused = race(t, db, racers, balances.Exceeded, func(ctx context.Context, tx *ent.Tx, _ int) error {
			return AddCounters(ctx, tx, []Counter{Add(balances, 156, "alice", each, 0)})
		})
		if owed := units(t, db, "SELECT owed FROM test_balance WHERE currency = 156 AND customer = 'alice'"); ok != 3 || refused != racers-3 || owed != 3*each-budget {
			t.Errorf("balance: %d paid, %d refused, %d owed; want 3, %d, %d", ok, refused, owed, racers-3, 3*each-budget)
		}
		// A customer who never topped up has nothing to spend.
		err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			return AddCounters(ctx, tx, []Counter{Add(balances, 156, "bob", 1, 0)})
		})
		if !errors.Is(err, balances.Exceeded) {
			t.Errorf("paying from no balance: %v, want %v", err, balances.Exceeded)
		}
	})
}

// A row claim takes every row it names or none: of 12 orders racing for
// vouchers 1 and 2 (each order both), one takes them and the others lose
// with the kind's error, leaving both held by the winner.
func TestRowClaimTakesAllOrNone(t *testing.T) {
	const racers = 12
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		createTables(t, db)
		ok, refused := race(t, db, racers, vouchers.Lost, func(ctx context.Context, tx *ent.Tx, i int) error {
			sn := fmt.Sprint("order-", i)
			return TakeRows(ctx, tx, []RowClaim{{Kind: vouchers, IDs: []int64{1, 2}, Holders: []string{sn, sn}}})
		})
		holders := units(t, db, "SELECT COUNT(DISTINCT holder) FROM test_voucher WHERE state = 'HELD'")
		if ok != 1 || refused != racers-1 || holders != 1 {
			t.Errorf("%d took, %d lost, %d holders; want 1, %d, 1", ok, refused, holders, racers-1)
		}
		var lost *ClaimLost
		err := store.WithTx(context.Background(), db, func(ctx context.Context, tx *ent.Tx) error {
			return TakeRows(ctx, tx, []RowClaim{{Kind: vouchers, IDs: []int64{2}, Holders: []string{"late"}}})
		})
		if !errors.As(err, &lost) || lost.Taken != 0 {
			t.Errorf("claiming a held voucher: %v, want a *ClaimLost that took 0", err)
		}
	})
}
