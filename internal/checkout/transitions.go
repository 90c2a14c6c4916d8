package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/predicate"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// The order state machine. Every change of orders.status is one of the
// transitions in this file, each a CAS on the status inside the caller's
// transaction, so that exactly one caller wins it and only the winner runs
// its side effects:
//
//	UNPAID → PAID      PayTx: a payment's notification (in payments' transaction)
//	UNPAID → CLOSED    CloseTx(Cancel): CancelOrder; closeLocked(Timeout): CloseExpired (closer.go)
//	PAID   → REFUNDED  CloseTx(Refund): a provider's whole refund made outside this shop (payments)
//	PAID | …SHIPPED | COMPLETED → REFUNDED  ConfirmRefundTx: after-sales (and refundOrder) once
//	                   everything paid was refunded (aftersale.go)
//	CLOSED → PAID      PayTx, for a lock-at-order order closed by timeout whose money came after
//	                   its lock was released, while available stock allows it (none with pool lines)
//	PAID | PARTIALLY_SHIPPED → PARTIALLY_SHIPPED | SHIPPED   shipTx (ship.go): shipOrder
//	SHIPPED → COMPLETED                                      completeTx (receipt.go): confirmReceipt, the closer
//
// Each line follows the stock mode it was placed under: a deduct-at-order
// line's stock is restored when its order closes, a lock-at-order line's
// lock is released when it closes and deducted when it is paid. A
// lock-mode line leaves LOCKED once, by its own CAS (moveLines): with the
// order's status CAS, no lock is released or deducted twice.
//
// An order is born UNPAID (place.go, and the batch); no other state is
// entered from anywhere else, and CLOSED, REFUNDED and COMPLETED are final.

// Transition is a state change of an order that gives its stock back.
type Transition struct {
	From, To enums.OrderStatus
	Reason   string               // stored in orders.close_reason
	Change   inventory.ChangeType // ledger change type of the restore
	Event    string               // outbox event type
}

// The transitions that return stock. Refunds use Refund through CloseTx in
// the payments transaction.
var (
	Cancel  = Transition{enums.OrderUnpaid, enums.OrderClosed, "cancel", inventory.CloseRestore, EventOrderClosed}
	Timeout = Transition{enums.OrderUnpaid, enums.OrderClosed, "timeout", inventory.CloseRestore, EventOrderClosed}
	Refund  = Transition{enums.OrderPaid, enums.OrderRefunded, "refund", inventory.RefundRestore, EventOrderRefunded}
)

// CloseTx is the one closing method (cancel, timeout closer, refunds): a CAS
// on the order's status, and only the caller that wins it restores the stock
// and emits the event, all in tx. It reports whether this caller won; losing
// (the order already moved on) is not an error.
func CloseTx(ctx context.Context, tx *ent.Tx, orderID int64, t Transition, now time.Time) (bool, error) {
	if err := lockOrderGoods(ctx, tx, orderID); err != nil {
		return false, err
	}
	won, err := closeLocked(ctx, tx, []int64{orderID}, t, now)
	if err != nil || len(won) == 0 || t.To != enums.OrderRefunded {
		return len(won) == 1, err
	}
	// A whole refund made at the provider: all the money is back, as the
	// after-sales' columns say (refund_reserved was 0: casClosed).
	if _, err := tx.ExecContext(ctx, "UPDATE orders SET refund_reserved = amount, refunded_amount = amount WHERE id = ?", orderID); err != nil {
		return false, fmt.Errorf("booking order %d refunded: %w", orderID, err)
	}
	return true, nil
}

// closeLocked is CloseTx for the orders ids (ascending) in one transaction
// whose goods lock (lockOrderGoods) the caller holds: the timeout closer
// closes a claim of several orders with it (closer.go), CloseTx one. It
// returns the orders this caller won, each closed once. Several orders must
// be held by the transaction already (the closer's claim, a locking read
// of them that found them all in t.From): their CAS is one UPDATE that must
// move every one of them.
//
// Every row is taken in the one lock order, across all the orders: the
// orders' CAS (and their lock-mode lines'), then every SKU row of every
// order in one ascending pass, then pool rows in ascending pool id, then
// the listing. Closing the orders one after another would take a SKU row
// below one it holds, and listing rows before SKU rows, the orders a
// placement of two SKUs deadlocks with.
func closeLocked(ctx context.Context, tx *ent.Tx, ids []int64, t Transition, now time.Time) ([]*Order, error) {
	wonIDs, err := casClosed(ctx, tx, ids, t, now)
	if err != nil || len(wonIDs) == 0 {
		return nil, err
	}
	won, err := loadAllTx(ctx, tx, wonIDs)
	if err != nil {
		return nil, err
	}
	// A refund gives back stock every line took (a lock-mode line took it
	// at payment); a close restores what deduct-mode lines took and
	// releases what lock-mode lines still hold. The lines' own CAS first
	// (order_line rows), then the SKU rows in one ascending pass, the lock
	// order of every stock-moving transaction.
	type poolLine struct {
		o   *Order
		l   *OrderLine
		act poolAct
	}
	var (
		docs  []inventory.Closing
		pools []poolLine
	)
	for _, o := range won {
		var released map[int64]bool
		if t.From == enums.OrderUnpaid {
			_, locked := byMode(o.Lines)
			moved, err := moveLines(ctx, tx, locked, enums.LockHeld, enums.LockReleased)
			if err != nil {
				return nil, err
			}
			released = make(map[int64]bool, len(moved))
			for _, l := range moved {
				released[l.id] = true
			}
		}
		main, pl := bySource(ascending(o.Lines))
		var restore, release []*OrderLine
		for _, l := range main {
			switch {
			case t.From != enums.OrderUnpaid || l.StockMode != enums.LockAtOrder:
				restore = append(restore, l)
			case released[l.id]:
				release = append(release, l)
			}
		}
		docs = append(docs, inventory.Closing{BizSn: o.OrderSn, Restore: stockOf(restore), Release: stockOf(release)})
		for _, l := range pl {
			p := poolLine{o: o, l: l}
			switch {
			case t.From != enums.OrderUnpaid || l.StockMode != enums.LockAtOrder:
				p.act = poolRestore
			case released[l.id]:
				p.act = poolRelease
			}
			pools = append(pools, p)
		}
	}
	// The main-stock lines of every order in one call: one ascending pass
	// over their SKU rows, then the listing. One order's line by line
	// (inventory.RestoreAndRelease: a restore booked before is a no-op),
	// several orders' in a few statements for all of them.
	if len(docs) == 1 {
		d := docs[0]
		_, err = inventory.RestoreAndRelease(ctx, tx, t.Change, inventory.BizOrder, d.BizSn, d.Restore, d.Release)
	} else {
		_, err = inventory.RestoreAndReleaseAll(ctx, tx, t.Change, inventory.BizOrder, docs)
	}
	if err != nil {
		return nil, err
	}
	// Pool lines after every SKU row (the lock order: SKU rows, then pool
	// rows, in ascending pool id across the orders), each by its mode as
	// SKU lines are: a restore or a released lock, to the pool while it has
	// not gone back, else to main stock; a close (not a refund) gives the
	// units back to the buyer's limit.
	slices.SortStableFunc(pools, func(a, b poolLine) int { return cmp.Compare(a.l.PoolID, b.l.PoolID) })
	for _, p := range pools {
		l := p.l
		one := stockOf([]*OrderLine{l})[0]
		var err error
		switch p.act {
		case poolRestore:
			err = inventory.RestorePool(ctx, tx, t.Change, inventory.BizOrder, p.o.OrderSn, one)
		case poolRelease:
			err = inventory.ReleasePool(ctx, tx, inventory.BizOrder, p.o.OrderSn, one, now)
		}
		if err != nil {
			return nil, err
		}
		if t.To == enums.OrderClosed {
			if err := inventory.ReleaseLimit(ctx, tx, l.PoolID, p.o.UserID, l.Quantity); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range won {
		if err := closePromo(ctx, tx, o, t, now); err != nil {
			return nil, err
		}
	}
	return won, emitAll(ctx, tx, t.Event, won, t.Reason, now)
}

// casClosed moves the orders ids from t.From to t.To, each by a CAS on its
// status, and returns those it moved. Several are held by the caller's
// transaction, read in t.From by its locking read (closeLocked): the read
// under the lock was their check, and one UPDATE by id moves them all.
// (With the status in its WHERE, MariaDB may find the rows through the
// (status, created_at) index and lock its gaps, where placements insert:
// deadlocks with placeOrder.)
func casClosed(ctx context.Context, tx *ent.Tx, ids []int64, t Transition, now time.Time) ([]int64, error) {
	if len(ids) > 1 {
		n, err := tx.Order.Update().Where(order.IDIn(ids...)).
			SetStatus(t.To).SetClosedAt(now).SetCloseReason(t.Reason).AddVersion(1).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("closing orders %v: %w", ids, err)
		}
		if n != len(ids) {
			return nil, fmt.Errorf("closing orders %v, held by this transaction: %d of them changed", ids, n)
		}
		return ids, nil
	}
	var won []int64
	for _, id := range ids {
		u := tx.Order.Update().Where(order.ID(id), order.StatusEQ(t.From))
		if t.To == enums.OrderRefunded {
			// Not an order an after-sale has reserved money of: that one is
			// refunded through its after-sales (internal/aftersale), which
			// restore the stock of their own units.
			u.Where(order.RefundReserved(0))
		}
		n, err := u.
			SetStatus(t.To).SetClosedAt(now).SetCloseReason(t.Reason).AddVersion(1).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("closing order %d: %w", id, err)
		}
		if n == 1 {
			won = append(won, id)
		}
	}
	return won, nil
}

// poolAct is what closing does to a pool line's units: a lock-mode line
// whose lock is no longer held gives nothing back (its buyer's limit still
// is).
type poolAct int

const (
	poolNone poolAct = iota
	poolRestore
	poolRelease
)

// ascending is lines in ascending SKU order.
func ascending(lines []*OrderLine) []*OrderLine {
	return slices.SortedFunc(slices.Values(lines), func(a, b *OrderLine) int { return cmp.Compare(a.ItemID, b.ItemID) })
}

// byMode splits lines into deduct-at-order and lock-at-order ones.
func byMode(lines []*OrderLine) (deduct, lock []*OrderLine) {
	for _, l := range lines {
		if l.StockMode == enums.LockAtOrder {
			lock = append(lock, l)
		} else {
			deduct = append(deduct, l)
		}
	}
	return deduct, lock
}

// bySource splits lines into those from main stock (keeping their order)
// and those from a stock pool (in ascending pool id).
func bySource(lines []*OrderLine) (main, pool []*OrderLine) {
	for _, l := range lines {
		if l.PoolID != 0 {
			pool = append(pool, l)
		} else {
			main = append(main, l)
		}
	}
	// Pool rows in ascending id, as every transaction takes them.
	slices.SortStableFunc(pool, func(a, b *OrderLine) int { return cmp.Compare(a.PoolID, b.PoolID) })
	return main, pool
}

// moveLines moves lock-mode lines from one lock state to another, each by
// its own CAS, and returns those this caller moved: the per-line key that a
// lock is released or deducted once, whoever races.
func moveLines(ctx context.Context, tx *ent.Tx, lines []*OrderLine, from, to enums.LockState) ([]*OrderLine, error) {
	var moved []*OrderLine
	for _, l := range lines {
		n, err := tx.OrderLine.Update().Where(orderline.ID(l.id), orderline.LockState(string(from))).
			SetLockState(string(to)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("moving line %d %s → %s: %w", l.id, from, to, err)
		}
		if n == 1 {
			l.lockState = to
			moved = append(moved, l)
		}
	}
	return moved, nil
}

// payments are the ledger movements of paying lines (change type 2).
func payments(o *Order, lines []*OrderLine, now time.Time) []inventory.Movement {
	m := make([]inventory.Movement, len(lines))
	for i, l := range lines {
		m[i] = inventory.Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: -l.Quantity, Type: inventory.PaymentDeduct,
			BizType: inventory.BizOrder, BizSn: o.OrderSn, At: now, PoolID: l.PoolID}
	}
	return m
}

// Payer is the payment that pays an order, as the order records it
// (orders.paid_payment_id) and its events name it. The payment row is
// payments'; checkout never writes it.
type Payer struct {
	ID        int64 // the payment row's id
	Provider  string
	PaymentID string // the provider's payment id
	Amount    money.Money
}

// PayTx is the transition UNPAID → PAID for payment p, inside the payment's
// transaction (tx), run once per payment that reached PAID. The first
// payment to arrive wins the CAS: the order names it in paid_payment_id, its
// lines' quantities are added to the SKUs' sold volume (inventory.Sold) and
// OrderPaid is emitted. Any later payment is money the order did not need:
// the payment stays PAID (payments never drops money), and the order is
// flagged needsReview with one event per payment asking a person to refund
// or review it: PaymentForClosedOrder when the closer got there first (a
// closed order is never reopened silently), DuplicatePayment when another
// payment already paid it. It reports whether p paid the order; losing is
// not an error.
func PayTx(ctx context.Context, tx *ent.Tx, orderID int64, p Payer, now time.Time) (bool, error) {
	if err := lockOrderGoods(ctx, tx, orderID); err != nil {
		return false, err
	}
	n, err := tx.Order.Update().
		Where(order.ID(orderID), order.StatusEQ(enums.OrderUnpaid)).
		SetStatus(enums.OrderPaid).SetPaidAt(now).SetPaidPaymentID(p.ID).AddVersion(1).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("paying order %d: %w", orderID, err)
	}
	if n == 1 {
		o, err := loadTx(ctx, tx, orderID)
		if err != nil {
			return false, err
		}
		// Lock-mode lines: the lock becomes the deduction (change type 2).
		// Main-stock lines' volume first: it touches their SKU rows in
		// ascending order, so the deduction after it takes rows this
		// transaction already holds. Then the pool rows, and only then the
		// volume of the pool lines' SKUs: a SKU sold from a pool has its
		// pool's row taken before its own, as the pool's return and a release
		// after it take them. Counting that volume before the pool's
		// deduction deadlocked with the return on MariaDB (2 of 8 runs of
		// TestLockModePoolUnderConcurrency, retries exhausted).
		_, locked := byMode(o.Lines)
		paid, err := moveLines(ctx, tx, locked, enums.LockHeld, enums.LockDeducted)
		if err != nil {
			return false, err
		}
		if len(paid) != len(locked) {
			return false, fmt.Errorf("%w: order %s was unpaid with lines not LOCKED", inventory.ErrLockDrift, o.OrderSn)
		}
		mainLines, poolLines := bySource(o.Lines)
		fromMain, fromPool := bySource(paid)
		if err := inventory.AddVolume(ctx, tx, stockOf(mainLines)); err != nil {
			return false, err
		}
		if err := inventory.Deduct(ctx, tx, payments(o, fromMain, now), true); err != nil {
			return false, err
		}
		if err := inventory.DeductPool(ctx, tx, payments(o, fromPool, now)); err != nil {
			return false, err
		}
		if err := inventory.AddVolume(ctx, tx, stockOf(poolLines)); err != nil {
			return false, err
		}
		// The listing after every SKU and pool row: writing the main lines'
		// sales before DeductPool held listing rows while waiting for a pool
		// row its return holds, and the return writes the listing last.
		if err := inventory.ListSold(ctx, tx, linesOf(o)); err != nil {
			return false, err
		}
		if err := payPromo(ctx, tx, o, p, false, now); err != nil {
			return false, err
		}
		return true, Emit(ctx, tx, EventOrderPaid, o.OrderSn, map[string]any{"orderSn": o.OrderSn, "amount": o.Amount.String()}, now)
	}
	if won, err := payAfterClose(ctx, tx, orderID, p, now); err != nil || won {
		return won, err
	}
	// Decided by conditional UPDATEs, not by reading the order: an UPDATE
	// sees the latest committed row (and waits for one in flight), where a
	// plain read on MySQL may see the transaction's older snapshot.
	if err := flagTx(ctx, tx, orderID, p, EventPaymentForClosedOrder, now, order.StatusEQ(enums.OrderClosed)); err != nil {
		return false, err
	}
	// Paid by another payment, whatever it went on to (paidOrders).
	// paid_payment_id <> ? is not true for NULL: an order paid before orders
	// named their paying payment is never flagged, since it cannot tell its
	// payer from an extra (the old rule).
	return false, flagTx(ctx, tx, orderID, p, EventDuplicatePayment, now,
		order.StatusIn(paidOrders...), order.PaidPaymentIDNEQ(p.ID))
}

// payAfterClose pays a lock-at-order order closed by the timeout closer
// whose money came after its lock was released, if available
// stock still covers every line: CLOSED → PAID by CAS (only an order no
// payment has paid), its lines RELEASED → DEDUCTED, the units deducted by
// CAS on available stock (change type 2), OrderPaidAfterClose. Otherwise,
// and for an order with any deduct-mode line (whose stock went back to the
// shelf with a restore of its own), with any pool line (its units went back
// to the flash sale and its buyer's limit was released: reviving it would
// sell past the pool's limit or after its end) or one its buyer cancelled
// (they said they did not want it: the money is for a person to refund),
// nothing changes here and the payment is flagged as any payment for a
// closed order is. It runs inside a savepoint, so a SKU found short undoes
// what this attempt did and nothing else of the payment's transaction.
func payAfterClose(ctx context.Context, tx *ent.Tx, orderID int64, p Payer, now time.Time) (bool, error) {
	o, err := loadTx(ctx, tx, orderID)
	if err != nil {
		return false, err
	}
	// The status is decided by the CAS below, not by this read: on MySQL a
	// plain read may see the transaction's older snapshot.
	deduct, locked := byMode(o.Lines)
	if _, pools := bySource(o.Lines); len(deduct) > 0 || len(locked) == 0 || len(pools) > 0 {
		return false, nil
	}
	won := false
	err = store.Savepoint(ctx, tx, "pay_after_close", func() error {
		n, err := tx.Order.Update().
			Where(order.ID(orderID), order.StatusEQ(enums.OrderClosed), order.CloseReason(Timeout.Reason), order.PaidPaymentIDIsNil()).
			SetStatus(enums.OrderPaid).SetPaidAt(now).SetPaidPaymentID(p.ID).AddVersion(1).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		paid, err := moveLines(ctx, tx, locked, enums.LockReleased, enums.LockDeducted)
		if err != nil {
			return err
		}
		if len(paid) != len(locked) {
			return errNotRevived
		}
		if err := inventory.Sold(ctx, tx, linesOf(o)); err != nil {
			return err
		}
		if err := inventory.Deduct(ctx, tx, payments(o, paid, now), false); err != nil {
			return err
		}
		if err := payPromo(ctx, tx, o, p, true, now); err != nil {
			return err
		}
		won = true
		slog.WarnContext(ctx, "paid after its lock was released: the order is PAID again", "orderSn", o.OrderSn,
			"provider", p.Provider, "paymentId", p.PaymentID)
		return Emit(ctx, tx, EventOrderPaidAfterClose, o.OrderSn, map[string]any{"orderSn": o.OrderSn, "amount": o.Amount.String(),
			"provider": p.Provider, "paymentId": p.PaymentID}, now)
	})
	var short *inventory.Short
	if errors.As(err, &short) || errors.Is(err, errNotRevived) {
		return false, nil // rolled back to the savepoint: flagged as closed below
	}
	return won && err == nil, err
}

// errNotRevived: a line of the order was not RELEASED as its closed order
// implies; the order is left closed.
var errNotRevived = errors.New("checkout: the closed order's lines are not all released")

// flagTx marks the order needsReview for payment p when it matches where,
// and then emits typ naming the payment; no match changes nothing.
func flagTx(ctx context.Context, tx *ent.Tx, orderID int64, p Payer, typ string, now time.Time, where ...predicate.Order) error {
	n, err := tx.Order.Update().Where(append(where, order.ID(orderID))...).SetNeedsReview(true).AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("flagging order %d: %w", orderID, err)
	}
	if n == 0 {
		return nil
	}
	o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldOrderSn).Only(ctx)
	if err != nil {
		return fmt.Errorf("loading flagged order %d: %w", orderID, err)
	}
	slog.WarnContext(ctx, "money the order did not need: refund or review by hand", "event", typ,
		"orderSn", o.OrderSn, "provider", p.Provider, "paymentId", p.PaymentID)
	return Emit(ctx, tx, typ, o.OrderSn, map[string]any{"orderSn": o.OrderSn, "amount": p.Amount.String(),
		"provider": p.Provider, "paymentId": p.PaymentID}, now)
}

// FlagRefundedOutsideTx flags order orderID for a person when the payment
// that paid it was refunded whole at the provider and the Refund transition
// could not take the order: units had shipped (the goods are the buyer's,
// no stock comes back), or an after-sale had refunded part of it already.
// The order keeps its status, so the flag and the log are what says the
// money went back outside the shop. Orders no payment holds (CLOSED,
// REFUNDED) are left as they are.
func FlagRefundedOutsideTx(ctx context.Context, tx *ent.Tx, orderID int64) error {
	n, err := tx.Order.Update().Where(order.ID(orderID), order.StatusIn(refundable...), order.NeedsReview(false)).
		SetNeedsReview(true).AddVersion(1).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	slog.WarnContext(ctx, "a payment was refunded whole at the provider while its order stands: review by hand", "orderId", orderID)
	return nil
}

// loadTx reads order orderID with its lines inside tx, after this
// transaction's CAS on it (so the row read is the one just changed).
func loadTx(ctx context.Context, tx *ent.Tx, orderID int64) (*Order, error) {
	row, err := tx.Order.Query().Where(order.ID(orderID)).WithLines().Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading order %d: %w", orderID, err)
	}
	return toOrder(row), nil
}

// loadAllTx is loadTx for the orders ids, in ascending id: one read of the
// orders and one of their lines, whatever their number.
func loadAllTx(ctx context.Context, tx *ent.Tx, ids []int64) ([]*Order, error) {
	rows, err := tx.Order.Query().Where(order.IDIn(ids...)).WithLines().Order(order.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading orders %v: %w", ids, err)
	}
	if len(rows) != len(ids) {
		return nil, fmt.Errorf("loading orders %v: found %d", ids, len(rows))
	}
	out := make([]*Order, len(rows))
	for i, r := range rows {
		out[i] = toOrder(r)
	}
	return out, nil
}

// linesOf is the stock an order's lines moved, for counting it sold.
func linesOf(o *Order) []inventory.RestoreLine { return stockOf(o.Lines) }

// stockOf is the units of lines, for giving them back or releasing them.
func stockOf(lines []*OrderLine) []inventory.RestoreLine {
	out := make([]inventory.RestoreLine, len(lines))
	for i, l := range lines {
		out[i] = inventory.RestoreLine{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Quantity, PoolID: l.PoolID}
	}
	return out
}

// CancelOrder cancels an UNPAID order of userID (any order for an admin).
func (s *Service) CancelOrder(ctx context.Context, userID string, admin bool, orderSn string) (*Order, error) {
	return s.ownersMove(ctx, userID, admin, orderSn, func(ctx context.Context, tx *ent.Tx, o *Order) (bool, error) {
		return CloseTx(ctx, tx, o.ID, Cancel, s.now())
	}, "only UNPAID orders can be cancelled")
}

// ownersMove runs move, one of an order's transitions, for userID (any
// order for an admin: FORBIDDEN for someone else's) on order orderSn in a
// transaction of its own, and answers the order as it then is; when move
// did not win (the order was not in its from state, or another caller won
// it), INVALID_ORDER_STATE saying what only.
func (s *Service) ownersMove(ctx context.Context, userID string, admin bool, orderSn string, move func(context.Context, *ent.Tx, *Order) (bool, error), only string) (*Order, error) {
	o, err := s.load(ctx, orderSn)
	if err != nil {
		return nil, err
	}
	if !admin && o.UserID != userID {
		return nil, fmt.Errorf("%w: order %s is not yours", errs.Forbidden, orderSn)
	}
	var won bool
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		won, err = move(ctx, tx, o)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	if o, err = s.load(ctx, orderSn); err != nil {
		return nil, err
	}
	if !won {
		return nil, fmt.Errorf("%w: order %s is %s, %s", ErrInvalidOrderState, orderSn, o.Status, only)
	}
	return o, nil
}

// lockOrderGoods takes the goods of every line of the orders orderIDs, main
// and pool, shared: the first lock of every stock-moving transaction
// (internal/inventory/goods_lock.go), so before the order's CAS too. The CAS
// rewrites the order's entry in the (status, created_at) index, where a
// placement inserts after taking the same goods shared: with the CAS first,
// a close, a placement and a catalog edit queued for the goods deadlocked
// three ways on MariaDB (TestPoolPathsBesideEditsDoNotDeadlock, about 1
// run in 50 under load). Taken per step (Sold) it once came after
// DeductPool's pool rows, with the same result. A plain read finds the
// goods, as the pool's return does (inventory.lockPoolGoods): an order's
// lines never change goods. It fixes MariaDB's snapshot before the locks
// are waited for, so a caller that reads the order after losing the CAS
// reads it after the transaction (payments' Refund).
func lockOrderGoods(ctx context.Context, tx *ent.Tx, orderIDs ...int64) error {
	var rows []struct {
		GoodsID int64 `sql:"goods_id"`
	}
	if err := tx.OrderLine.Query().Where(orderline.OrderIDIn(orderIDs...)).Select(orderline.FieldGoodsID).Scan(ctx, &rows); err != nil {
		return fmt.Errorf("reading the goods of orders %v: %w", orderIDs, err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.GoodsID
	}
	return inventory.LockGoods(ctx, tx, ids...)
}
