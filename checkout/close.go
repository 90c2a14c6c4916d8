package checkout

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/enums"
	"storefront/errs"
	"storefront/inventory"
	"storefront/store"
)

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
	Refund  = Transition{enums.OrderPaid, enums.OrderRefunded, "refund", inventory.RefundRestore, "OrderRefunded"}
)

// CloseTx is the one closing method (cancel, timeout closer, refunds): a CAS
// on the order's status, and only the caller that wins it restores the stock
// and emits the event, all in tx. It reports whether this caller won; losing
// (the order already moved on) is not an error.
func CloseTx(ctx context.Context, tx *ent.Tx, orderID int64, t Transition, now time.Time) (bool, error) {
	n, err := tx.Order.Update().Where(order.ID(orderID), order.StatusEQ(t.From)).
		SetStatus(t.To).SetClosedAt(now).SetCloseReason(t.Reason).AddVersion(1).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("closing order %d: %w", orderID, err)
	}
	if n == 0 {
		return false, nil
	}
	row, err := tx.Order.Query().Where(order.ID(orderID)).WithLines().Only(ctx)
	if err != nil {
		return false, fmt.Errorf("loading closed order %d: %w", orderID, err)
	}
	o := toOrder(row)
	restore := make([]inventory.RestoreLine, len(o.Lines))
	for i, l := range o.Lines {
		restore[i] = inventory.RestoreLine{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Quantity}
	}
	if _, err := inventory.Restore(ctx, tx, t.Change, inventory.BizOrder, o.OrderSn, restore); err != nil {
		return false, err
	}
	return true, emit(ctx, tx, t.Event, o, t.Reason, now)
}

// CancelOrder cancels an UNPAID order of userID (any order for an admin).
func (s *Service) CancelOrder(ctx context.Context, userID string, admin bool, orderSn string) (*Order, error) {
	o, err := s.load(ctx, orderSn)
	if err != nil {
		return nil, err
	}
	if !admin && o.UserID != userID {
		return nil, fmt.Errorf("%w: order %s is not yours", errs.Forbidden, orderSn)
	}
	var won bool
	err = store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		won, err = CloseTx(ctx, tx, o.ID, Cancel, s.now())
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	if o, err = s.load(ctx, orderSn); err != nil {
		return nil, err
	}
	if !won {
		return nil, fmt.Errorf("%w: order %s is %s, only UNPAID orders can be cancelled", ErrInvalidOrderState, orderSn, o.Status)
	}
	return o, nil
}

// CloseExpired closes every UNPAID order older than the order TTL, in batches,
// each order in its own short transaction through CloseTx. Several closers
// may run at once: each order is closed, and its stock restored, once. It
// returns how many orders this call closed.
func (s *Service) CloseExpired(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.OrderTTL)
	closed := 0
	for {
		ids, err := s.db.Client.Order.Query().
			Where(order.StatusEQ(enums.OrderUnpaid), order.CreatedAtLT(cutoff)).
			Order(order.ByID()).Limit(s.cfg.CloseBatch).IDs(ctx)
		if err != nil {
			return closed, store.Classify(fmt.Errorf("finding expired orders: %w", err))
		}
		for _, id := range ids {
			var won bool
			err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
				var err error
				won, err = CloseTx(ctx, tx, id, Timeout, s.now())
				return err
			})
			if err != nil {
				return closed, store.Classify(err)
			}
			if won {
				closed++
			}
		}
		if len(ids) < s.cfg.CloseBatch {
			return closed, nil
		}
	}
}
