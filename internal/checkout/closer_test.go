package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/logtest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// Two instances of one shop, each with its closer running every close
// interval, under buyers placing orders continuously with a short TTL: no
// order may stay UNPAID longer than its TTL plus three close intervals
// (issue 38: two closers walking the same rows one order per transaction
// fell up to 8,106 orders behind on MariaDB and 7,216 on PostgreSQL). A
// watcher reads the unpaid orders every 100 ms and measures how late each
// one is: from its expiry (the creation time placeOrder answered with, the
// one its TTL counts from, plus the TTL) or from placeOrder's answer when
// that came later — an order is not the closer's to see before its
// transaction commits, and on a loaded machine (CI runs packages side by
// side) a batch can take longer than the TTL to answer. The three close
// intervals hold once the buyers have stopped, counted from an order's
// expiry or from the stop, whichever is later; while they place, an order
// may be up to 6 s late: CI starves the closers of CPU beside 16 buyers
// and another package's tests (224 orders/s instead of ~850, an order
// 3.1 s late, twice in CI), and a test cannot tell that from a slow
// closer. A closer that falls behind still fails: its backlog cannot drain
// in three intervals after the load (with claims of one order: 2.3 s on
// SQLite, 20 s on the servers). Afterwards every order is closed once:
// each SKU's stock is back where it started and its ledger sums to it.
//
// At 52fadce (one order a transaction, both closers walking the same rows):
// oldest unpaid 5.2 s on SQLite, 32 s on MariaDB, 25 s on PostgreSQL; now
// about 2.1–2.7 s on each on an idle machine.
func TestClosersKeepUpWithCheckout(t *testing.T) {
	const (
		ttl      = 2 * time.Second
		interval = 500 * time.Millisecond
		load     = 10 * time.Second
		buyers   = 8            // per instance
		allowed  = 3 * interval // past an order's expiry, once the buyers stopped
		loaded   = 6 * time.Second
		bound    = ttl + allowed
	)
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			logs := logtest.Capture(t)
			f, svcs := instances(t, b, path{"group", true}, 2)
			for _, s := range svcs {
				s.cfg.OrderTTL = ttl
				s.now = func() time.Time { return time.Now().UTC() }
			}
			skus := []int64{f.skuID(t, "黑色,L"), f.skuID(t, "白色,M"), f.skuID(t, "白色,S"), f.skuID(t, "黑色,M")}
			const opening = 10_000_000
			for _, id := range skus {
				f.setStock(t, id, opening)
			}

			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var (
				expiry   sync.Map // orderSn → when the closer may first close it (placed)
				count    atomic.Int64
				slowest  atomic.Int64 // the slowest placeOrder's answer, ns
				lines    atomic.Int64
				failed   atomic.Int64
				firstErr atomic.Value
				wg       sync.WaitGroup
			)
			until := time.Now().Add(load)
			for i, s := range svcs {
				for w := range buyers {
					wg.Go(func() {
						for n := 0; time.Now().Before(until); n++ {
							items := []ItemInput{one(skus[(w+n)%len(skus)], 1)}
							if n%4 == 3 { // a two-SKU order now and then: the plain path, two SKU rows to restore
								items = append(items, one(skus[(w+n+1)%len(skus)], 2))
							}
							began := time.Now()
							o, err := s.Place(ctx, PlaceInput{UserID: fmt.Sprint("buyer-", i, "-", w), Items: items,
								IdempotencyKey: fmt.Sprint("keep-up-", i, "-", w, "-", n)})
							if err != nil {
								failed.Add(1)
								firstErr.CompareAndSwap(nil, err)
								continue
							}
							answered := time.Now()
							expiry.Store(o.OrderSn, placed{o.CreatedAt, answered})
							for took := int64(answered.Sub(began)); ; {
								if was := slowest.Load(); took <= was || slowest.CompareAndSwap(was, took) {
									break
								}
							}
							count.Add(1)
							lines.Add(int64(len(items)))
						}
					})
				}
			}
			var closers sync.WaitGroup
			closerErrs := make(chan error, 2)
			for _, s := range svcs {
				closers.Go(func() {
					tick := time.NewTicker(interval)
					defer tick.Stop()
					for {
						if _, err := s.CloseExpired(ctx); err != nil && ctx.Err() == nil {
							select {
							case closerErrs <- err:
							default:
							}
						}
						select {
						case <-ctx.Done():
							return
						case <-tick.C:
						}
					}
				})
			}

			// The watcher, until no order is left unpaid after the load.
			placing := make(chan struct{})
			go func() { wg.Wait(); close(placing) }()
			var worst, worstOverdue, worstAfter time.Duration
			var stoppedAt time.Time
			var late []string
			backlog := 0
			for {
				now := time.Now()
				// While the buyers place, an order may be up to loaded late
				// (CI's packages share 2 cores with them; see the test's
				// comment); once they have stopped, no more than allowed.
				limit, stopped := loaded, false
				select {
				case <-placing:
					limit, stopped = allowed, true
					if stoppedAt.IsZero() {
						stoppedAt = now
					}
				default:
				}
				rows, err := f.db.SQL.Query("SELECT order_sn FROM orders WHERE status = ? AND created_at < ?", string(enums.OrderUnpaid), now.UTC().Add(-ttl))
				if err != nil {
					t.Fatal(err)
				}
				expired := 0
				for rows.Next() {
					var sn string
					if err := rows.Scan(&sn); err != nil {
						t.Fatal(err)
					}
					expired++
					v, ok := expiry.Load(sn)
					if !ok {
						continue // its placeOrder has not returned yet: not yet the closer's to see
					}
					p := v.(placed)
					age, overdue := now.Sub(p.created), now.Sub(p.expires(ttl))
					worst, worstOverdue = max(worst, age), max(worstOverdue, overdue)
					if stopped {
						// Late from its expiry or from the buyers' stop, whichever
						// is later: the backlog of the load gets allowed to drain.
						overdue = now.Sub(p.expires(ttl))
						if e := p.expires(ttl); e.Before(stoppedAt) {
							overdue = now.Sub(stoppedAt)
						}
						worstAfter = max(worstAfter, overdue)
					}
					if overdue > limit && len(late) < 5 {
						late = append(late, fmt.Sprintf("%s unpaid %v after it was created, %v after placeOrder answered (buyers stopped: %v)", sn,
							age.Round(time.Millisecond), now.Sub(p.answered).Round(time.Millisecond), stopped))
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				rows.Close()
				backlog = max(backlog, expired)
				if now.After(until) {
					var unpaid int
					if err := f.db.SQL.QueryRow("SELECT COUNT(*) FROM orders WHERE status = ?", string(enums.OrderUnpaid)).Scan(&unpaid); err != nil {
						t.Fatal(err)
					}
					if unpaid == 0 {
						break
					}
					if now.After(until.Add(bound + 30*time.Second)) {
						t.Fatalf("%d orders still unpaid %v after the load stopped", unpaid, now.Sub(until).Round(time.Second))
					}
				}
				time.Sleep(100 * time.Millisecond) // the watcher's period: it samples, there is no event to await
			}
			wg.Wait()
			stop()
			closers.Wait()
			close(closerErrs)
			for err := range closerErrs {
				t.Errorf("a closer's pass failed: %v", err)
			}
			t.Logf("%d orders placed (%.0f/s, slowest placeOrder %v) by %d buyers on 2 instances; most expired unpaid at once: %d; oldest unpaid seen: %v, most overdue %v (allowed %v while placing), %v once the buyers stopped (allowed %v)",
				count.Load(), float64(count.Load())/load.Seconds(), time.Duration(slowest.Load()).Round(time.Millisecond), 2*buyers,
				backlog, worst.Round(time.Millisecond), worstOverdue.Round(time.Millisecond), loaded, worstAfter.Round(time.Millisecond), allowed)
			if n := failed.Load(); n > 0 {
				t.Errorf("%d placeOrder failed, first: %v", n, firstErr.Load())
			}
			if len(late) > 0 {
				t.Errorf("orders stayed UNPAID past their expiry more than %v while the buyers placed or %v after: most overdue %v, %v after; %s; the closers logged:\n%s",
					loaded, allowed, worstOverdue.Round(time.Millisecond), worstAfter.Round(time.Millisecond), strings.Join(late, "; "), logs)
			}

			// Every order closed once, by the timeout, and its stock back.
			var closed, restores int64
			if err := f.db.SQL.QueryRow("SELECT COUNT(*) FROM orders WHERE status = ? AND close_reason = ?", string(enums.OrderClosed), Timeout.Reason).Scan(&closed); err != nil {
				t.Fatal(err)
			}
			if err := f.db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE change_type = 3").Scan(&restores); err != nil {
				t.Fatal(err)
			}
			if closed != count.Load() || restores != lines.Load() {
				t.Errorf("closed %d orders with %d restore rows; want %d, %d", closed, restores, count.Load(), lines.Load())
			}
			for _, id := range skus {
				if got, ledger := f.stock(t, id), f.ledgerSum(t, id, 0); got != opening || ledger != got {
					t.Errorf("SKU %d: stock %d, ledger %d; want both %d", id, got, ledger, opening)
				}
			}
		})
	}
}

// placed is what the keep-up test knows of an order placeOrder answered.
type placed struct{ created, answered time.Time }

// expires is when the closer may first close the order: its TTL after its
// creation, and not before the closer can see it.
func (p placed) expires(ttl time.Duration) time.Time {
	if e := p.created.Add(ttl); e.After(p.answered) {
		return e
	}
	return p.answered
}

// One order that cannot be closed costs only itself: the claim it is in
// fails, its orders are closed again one by one, and the pass goes on with
// every order after it. The failure is logged as what it is, with the
// order's id, never as "database unavailable"; a deadlock on the order is
// retried (twice, as placement's are) before it is given up for this pass.
func TestCloserPassSurvivesAFailingOrder(t *testing.T) {
	for _, c := range []struct {
		name, cause string
		err         error
		attempts    int // of the failing order alone
	}{
		{"refused", "error", errors.New("planted: the database refuses this order's rows"), 1},
		{"deadlock", "deadlock", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock (planted)"}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				blackL, whiteM := f.skuID(t, "黑色,L"), f.skuID(t, "白色,M")
				f.setStock(t, blackL, 1000)
				f.setStock(t, whiteM, 1000)
				start := f.stock(t, blackL)
				const orders = 70 // three claims: 32, 32 and 6
				var bad string
				var badID int64
				for i := range orders {
					o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(blackL, 1), one(whiteM, 1)}})
					if err != nil {
						t.Fatal(err)
					}
					if i == 40 { // in the second claim
						bad, badID = o.OrderSn, o.ID
					}
				}
				var attempts atomic.Int64
				f.svc.closing = func(won []*Order) error {
					for _, o := range won {
						if o.OrderSn == bad {
							if len(won) == 1 {
								attempts.Add(1)
							}
							return fmt.Errorf("closing order %d: %w", o.ID, c.err)
						}
					}
					return nil
				}
				logs := logtest.Capture(t)
				f.advance(f.svc.cfg.OrderTTL + time.Second)
				n, err := f.svc.CloseExpired(ctx)
				if err != nil || n != orders-1 {
					t.Fatalf("CloseExpired = %d, %v; want %d closed and the pass to go on", n, err, orders-1)
				}
				var unpaid []string
				rows, err := db.SQL.Query("SELECT order_sn FROM orders WHERE status = ?", string(enums.OrderUnpaid))
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var sn string
					if err := rows.Scan(&sn); err != nil {
						t.Fatal(err)
					}
					unpaid = append(unpaid, sn)
				}
				rows.Close()
				if len(unpaid) != 1 || unpaid[0] != bad {
					t.Errorf("unpaid after the pass: %v; want only the failing order %s", unpaid, bad)
				}
				if got := f.stock(t, blackL); got != start-1 || f.ledgerSum(t, blackL, 0) != got {
					t.Errorf("SKU %d: stock %d, ledger %d; want %d, held only by the failing order", blackL, got, f.ledgerSum(t, blackL, 0), start-1)
				}
				if got := attempts.Load(); got != int64(c.attempts) {
					t.Errorf("the failing order was tried %d times on its own; want %d", got, c.attempts)
				}
				out := logs.String()
				want := fmt.Sprintf("order=%d cause=%s", badID, c.cause)
				if !strings.Contains(out, "timeout closer: order not closed") || !strings.Contains(out, want) || strings.Contains(out, "database unavailable") {
					t.Errorf("the log does not name the order and its cause (%q):\n%s", want, out)
				}
				// The next pass, the order fixed, closes it.
				f.svc.closing = nil
				if n, err := f.svc.CloseExpired(ctx); n != 1 || err != nil {
					t.Errorf("the next pass = %d, %v; want the order left over closed", n, err)
				}
			})
		})
	}
}
