package aftersale

import (
	"context"
	"fmt"
	"slices"
	"time"

	"storefront/ent"
	"storefront/ent/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// The after-sale state machine. Every change of after_sale.status is one
// of these, a CAS on the old status (raising the version) in a transaction
// that also writes its after_sale_log row, so each happens once and only
// its winner moves money, units or stock:
//
//	REQUESTED      → APPROVED        Approve (admin); a refund only goes on at once:
//	APPROVED       → REFUNDING       money reserved (checkout.ReserveRefundTx), refund written
//	REQUESTED      → REJECTED        Reject (admin): units given back
//	REQUESTED | APPROVED | RETURN_SHIPPED → CANCELLED   Cancel (buyer): units given back
//	APPROVED       → RETURN_SHIPPED  ReturnShipped (buyer, a return)
//	RETURN_SHIPPED → REFUNDING       ReceiveReturn (admin): stock restored, money reserved, refund written
//	REFUNDING      → REFUNDED        Settlement.RefundedTx (payments: the provider confirmed)
//
// REJECTED, CANCELLED and REFUNDED are final; nothing leaves REFUNDING but
// the provider's confirmation, so nothing is cancelled once money moves.

// Actor is who moves an after-sale, as its log records it.
type Actor struct {
	ID    string
	Admin bool
}

// move is the CAS of after-sale id from one status to another, with the
// log row; it reports whether this caller won.
func move(ctx context.Context, tx *ent.Tx, id int64, from, to enums.AfterSaleStatus, actor, note string, now time.Time, set func(*ent.AfterSaleUpdate)) (bool, error) {
	u := tx.AfterSale.Update().Where(aftersale.ID(id), aftersale.StatusEQ(from)).
		SetStatus(to).AddVersion(1).SetUpdatedAt(now)
	if set != nil {
		set(u)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return false, fmt.Errorf("moving after-sale %d %s → %s: %w", id, from, to, err)
	}
	if n == 0 {
		return false, nil
	}
	return true, logTx(ctx, tx, id, actor, from, to, note, now)
}

// logTx writes one after_sale_log row.
func logTx(ctx context.Context, tx *ent.Tx, id int64, actor string, from, to enums.AfterSaleStatus, note string, now time.Time) error {
	return tx.AfterSaleLog.Create().SetAfterSaleID(id).SetActor(actor).SetFromStatus(string(from)).SetToStatus(string(to)).
		SetNote(note).SetCreatedAt(now).Exec(ctx)
}

// find reads after-sale sn for actor: NOT_FOUND when it does not exist,
// FORBIDDEN when a buyer names someone else's.
func (s *Service) find(ctx context.Context, sn string, actor Actor) (*AfterSale, error) {
	a, err := s.get(ctx, sn)
	if err != nil {
		return nil, err
	}
	if !actor.Admin && a.UserID != actor.ID {
		return nil, fmt.Errorf("%w: after-sale %s is not yours", errs.Forbidden, sn)
	}
	return a, nil
}

// refused is the error of a transition the after-sale's state refuses.
func refused(a *AfterSale, what string) error {
	return fmt.Errorf("%w: after-sale %s is %s; %s", ErrInvalidState, a.Sn, a.Status, what)
}

// Approve accepts a REQUESTED after-sale (admin). A refund only goes on to
// REFUNDING in the same transaction and its refund is sent; a return waits
// for the buyer to send the goods. Approving one that is REFUNDING again
// sends its refund again (a new number if the provider refused the last).
func (s *Service) Approve(ctx context.Context, actor Actor, sn string) (*AfterSale, error) {
	a, err := s.find(ctx, sn, actor)
	if err != nil {
		return nil, err
	}
	var o *checkout.Order
	if a.Type == enums.AfterSaleRefundOnly || a.Status == enums.AfterSaleRefunding {
		if o, err = s.orderOf(ctx, a); err != nil {
			return nil, err
		}
	}
	if a.Status == enums.AfterSaleRefunding {
		return s.resend(ctx, a, o)
	}
	return s.approve(ctx, actor, a, o)
}

// approve is Approve of a, whose order o (read for a refund only) names
// the payment its refund goes back through.
func (s *Service) approve(ctx context.Context, actor Actor, a *AfterSale, o *checkout.Order) (*AfterSale, error) {
	now := s.now()
	var no string
	won := false
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		no, won = "", false
		var p payments.Paying
		if a.Type == enums.AfterSaleRefundOnly {
			var err error
			if p, err = s.refunds.PayingTx(ctx, tx, o); err != nil {
				return err
			}
		}
		ok, err := move(ctx, tx, a.id, enums.AfterSaleRequested, enums.AfterSaleApproved, actor.ID, "", now, nil)
		if err != nil || !ok {
			return err
		}
		won = true
		if a.Type == enums.AfterSaleRefundOnly {
			if ok, no, err = s.toRefunding(ctx, tx, a, p, enums.AfterSaleApproved, actor.ID, "", now); err == nil && !ok {
				err = fmt.Errorf("after-sale %s left APPROVED inside its own transaction", a.Sn)
			}
		}
		return err
	})
	return s.ended(ctx, a.Sn, no, won, err, "only a REQUESTED after-sale can be approved")
}

// orderOf reads a's order: what its refunds name of it (the paying
// payment, the number, the currency) is written once, when it is paid,
// so a read before the refund's transaction holds for it.
func (s *Service) orderOf(ctx context.Context, a *AfterSale) (*checkout.Order, error) {
	o, err := s.orders.Order(ctx, "", true, a.OrderSn)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, fmt.Errorf("%w: no order %s", ErrNotFound, a.OrderSn)
	}
	return o, nil
}

// ended answers a transition that sends a refund: the error of its
// transaction, or, when another caller won the CAS, the after-sale as it
// is now if that caller took it on to a refund (later) and the state's
// refusal otherwise; else the after-sale with its refund sent.
func (s *Service) ended(ctx context.Context, sn, no string, won bool, err error, why string, later ...enums.AfterSaleStatus) (*AfterSale, error) {
	if err != nil {
		return nil, store.Classify(err)
	}
	if !won {
		cur, err := s.get(ctx, sn)
		if err != nil {
			return nil, err
		}
		if slices.Contains(later, cur.Status) {
			return cur, nil
		}
		return nil, refused(cur, why)
	}
	return s.sent(ctx, sn, no)
}

// toRefunding moves a from from to REFUNDING by its CAS and, when this
// caller won it, reserves the order's money by checkout's CAS (the sum of
// refunds never passes what was paid) and writes its refund of p, in tx.
// It reports whether it won, and the refund's number.
func (s *Service) toRefunding(ctx context.Context, tx *ent.Tx, a *AfterSale, p payments.Paying, from enums.AfterSaleStatus, actor, note string, now time.Time) (bool, string, error) {
	ok, err := move(ctx, tx, a.id, from, enums.AfterSaleRefunding, actor, note, now, nil)
	if err != nil || !ok {
		return false, "", err
	}
	if err := checkout.ReserveRefundTx(ctx, tx, a.orderID, a.Amount); err != nil {
		return false, "", err
	}
	no, err := s.refunds.OpenRefundTx(ctx, tx, p, a.ask())
	return true, no, err
}

// ask is the refund a needs sent.
func (a *AfterSale) ask() payments.RefundAsk {
	return payments.RefundAsk{AfterSaleID: a.id, AfterSaleSn: a.Sn, Amount: a.Amount, Reason: a.Reason}
}

// sent sends refund no (when there is one) after its transaction
// committed, and answers the after-sale as it is then (REFUNDED already
// when the provider confirmed in its answer).
func (s *Service) sent(ctx context.Context, sn, no string) (*AfterSale, error) {
	if no != "" {
		if err := s.refunds.SendRefund(ctx, no); err != nil {
			return nil, store.Classify(err)
		}
	}
	return s.get(ctx, sn)
}

// resend opens the refund of a REFUNDING after-sale of order o again (the
// same one while it is pending; the next number after a refusal) and
// sends it.
func (s *Service) resend(ctx context.Context, a *AfterSale, o *checkout.Order) (*AfterSale, error) {
	var no string
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		p, err := s.refunds.PayingTx(ctx, tx, o)
		if err != nil {
			return err
		}
		no, err = s.refunds.OpenRefundTx(ctx, tx, p, a.ask())
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.sent(ctx, a.Sn, no)
}

// Reject refuses a REQUESTED after-sale (admin) with a reason; its units
// go back to the lines.
func (s *Service) Reject(ctx context.Context, actor Actor, sn, reason string) (*AfterSale, error) {
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	return s.end(ctx, actor, sn, enums.AfterSaleRejected, reason, []enums.AfterSaleStatus{enums.AfterSaleRequested},
		"only a REQUESTED after-sale can be rejected")
}

// Cancel withdraws the buyer's own after-sale before any money moved
// (REQUESTED, APPROVED or RETURN_SHIPPED); its units go back to the lines.
func (s *Service) Cancel(ctx context.Context, actor Actor, sn string) (*AfterSale, error) {
	return s.end(ctx, actor, sn, enums.AfterSaleCancelled, "",
		[]enums.AfterSaleStatus{enums.AfterSaleRequested, enums.AfterSaleApproved, enums.AfterSaleReturnShipped},
		"an after-sale can be cancelled only before its refund")
}

// end moves after-sale sn from one of from to a final state that gives its
// units back (REJECTED, CANCELLED). The CAS names the status read; if it
// moved meanwhile, the after-sale is read again and tried from there.
func (s *Service) end(ctx context.Context, actor Actor, sn string, to enums.AfterSaleStatus, reason string, from []enums.AfterSaleStatus, why string) (*AfterSale, error) {
	a, err := s.find(ctx, sn, actor)
	if err != nil {
		return nil, err
	}
	for range 3 {
		if !slices.Contains(from, a.Status) {
			return nil, refused(a, why)
		}
		now := s.now()
		won := false
		err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
			if a.withheldAny() {
				// Units withheld come back to ship: the order's row first, as a shipment takes it.
				if err := checkout.LockOrderTx(ctx, tx, a.orderID); err != nil {
					return err
				}
			}
			ok, err := move(ctx, tx, a.id, a.Status, to, actor.ID, reason, now, func(u *ent.AfterSaleUpdate) {
				if to == enums.AfterSaleRejected {
					u.SetRejectReason(reason)
				}
			})
			if err != nil || !ok {
				return err
			}
			won = true
			return release(ctx, tx, a, now)
		})
		if err != nil {
			return nil, store.Classify(err)
		}
		if a, err = s.get(ctx, sn); err != nil || won {
			return a, err
		}
	}
	return nil, refused(a, why)
}

// release gives the units of a, which has just ended without a refund,
// back to its order's lines; withheld ones are to ship again.
func release(ctx context.Context, tx *ent.Tx, a *AfterSale, now time.Time) error {
	if err := releaseLines(ctx, tx, a); err != nil {
		return err
	}
	if !a.withheldAny() {
		return nil
	}
	return checkout.SettleFulfilmentTx(ctx, tx, a.orderID, now)
}

// releaseLines gives a's units and money back to its order's lines.
func releaseLines(ctx context.Context, tx *ent.Tx, a *AfterSale) error {
	for _, l := range a.Lines {
		if err := checkout.ReleaseLineTx(ctx, tx, l.orderLineID, l.Quantity, checkout.LineHold{Amount: l.Amount, Withheld: l.withheld}); err != nil {
			return err
		}
	}
	return nil
}

// ReturnShipped records the buyer's parcel back of an APPROVED return.
func (s *Service) ReturnShipped(ctx context.Context, actor Actor, sn, carrier, trackingNo string) (*AfterSale, error) {
	if carrier == "" || len(carrier) > MaxText || trackingNo == "" || len(trackingNo) > MaxText {
		return nil, fmt.Errorf("%w: a carrier and a tracking number of 1 to %d bytes are required", ErrInvalidInput, MaxText)
	}
	a, err := s.find(ctx, sn, actor)
	if err != nil {
		return nil, err
	}
	if a.Type != enums.AfterSaleReturnAndRefund {
		return nil, fmt.Errorf("%w: after-sale %s is a refund only: nothing is sent back", ErrInvalidInput, sn)
	}
	won := false
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		won, err = move(ctx, tx, a.id, enums.AfterSaleApproved, enums.AfterSaleReturnShipped, actor.ID, carrier+" "+trackingNo, s.now(),
			func(u *ent.AfterSaleUpdate) { u.SetReturnCarrier(carrier).SetReturnTrackingNo(trackingNo) })
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	if a, err = s.get(ctx, sn); err != nil || won {
		return a, err
	}
	return nil, refused(a, "only an APPROVED return can be shipped back")
}

// ReceiveReturn records the goods of a return back in the warehouse
// (admin): their stock is restored (change type 4 under the after-sale's
// number, to the pool or main stock they came from), the money reserved
// and the refund sent, in the transaction that moves it to REFUNDING. A
// replay finds it REFUNDING or REFUNDED and answers it as it is.
func (s *Service) ReceiveReturn(ctx context.Context, actor Actor, sn string) (*AfterSale, error) {
	a, err := s.find(ctx, sn, actor)
	if err != nil {
		return nil, err
	}
	if a.Type != enums.AfterSaleReturnAndRefund {
		return nil, fmt.Errorf("%w: after-sale %s is a refund only: nothing comes back", ErrInvalidInput, sn)
	}
	o, err := s.orderOf(ctx, a)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var no string
	won := false
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		no, won = "", false
		// The lock order of every refund: the paying payment, the goods, then the rest.
		p, err := s.refunds.PayingTx(ctx, tx, o)
		if err != nil {
			return err
		}
		if err := inventory.LockGoods(ctx, tx, goodsOf(a.Lines)...); err != nil {
			return err
		}
		if won, no, err = s.toRefunding(ctx, tx, a, p, enums.AfterSaleReturnShipped, actor.ID, "received", now); err != nil || !won {
			return err
		}
		// The SKU rows after the order's: the lock order of every close.
		return restore(ctx, tx, a, func(l *Line) int64 { return l.Quantity })
	})
	return s.ended(ctx, sn, no, won, err, "only a RETURN_SHIPPED after-sale can be received",
		enums.AfterSaleRefunding, enums.AfterSaleRefunded)
}

// restore gives back units(l) of each line of a (change type 4, the
// after-sale's number as business key: once per line, whoever repeats
// it): main-stock lines in one ascending pass over their SKU rows, then
// pool lines to their pool while it has not gone back, else to main stock
// (inventory.RestorePool), after every SKU row: the lock order of every
// stock-moving transaction.
func restore(ctx context.Context, tx *ent.Tx, a *AfterSale, units func(*Line) int64) error {
	var main []inventory.RestoreLine
	var pools []inventory.RestoreLine
	for _, l := range a.Lines {
		n := units(l)
		if n <= 0 {
			continue
		}
		rl := inventory.RestoreLine{ItemID: l.ItemID, GoodsID: l.goodsID, Num: n, PoolID: l.poolID}
		if l.poolID != 0 {
			pools = append(pools, rl)
		} else {
			main = append(main, rl)
		}
	}
	if len(main) > 0 {
		if _, err := inventory.Restore(ctx, tx, inventory.RefundRestore, inventory.BizAfterSale, a.Sn, main); err != nil {
			return err
		}
	}
	slices.SortStableFunc(pools, func(x, y inventory.RestoreLine) int { return int(x.PoolID - y.PoolID) })
	for _, p := range pools {
		if err := inventory.RestorePool(ctx, tx, inventory.RefundRestore, inventory.BizAfterSale, a.Sn, p); err != nil {
			return err
		}
	}
	return nil
}

func goodsOf(lines []*Line) []int64 {
	ids := make([]int64, len(lines))
	for i, l := range lines {
		ids[i] = l.goodsID
	}
	return ids
}
