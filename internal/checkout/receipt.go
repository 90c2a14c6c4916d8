package checkout

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Receipt: a SHIPPED order becomes COMPLETED once, when its
// buyer confirms receipt or when the closer finds it shipped more than
// --auto-confirm-after ago (seed 003: LikeShop confirms automatically after
// 7 days). Both are the same CAS on the status, SHIPPED → COMPLETED, and
// only its winner writes OrderCompleted: however many confirmations and
// closers race, the order completes once, with one event.

// Reasons an order completed, in OrderCompleted's data.
const (
	completedByBuyer = "buyer"
	completedByTimer = "auto"
)

// ConfirmReceipt completes userID's SHIPPED order orderSn: FORBIDDEN for
// anyone else's, INVALID_ORDER_STATE unless it is SHIPPED.
func (s *Service) ConfirmReceipt(ctx context.Context, userID, orderSn string) (*Order, error) {
	return s.ownersMove(ctx, userID, false, orderSn, func(ctx context.Context, tx *ent.Tx, o *Order) (bool, error) {
		return completeTx(ctx, tx, o, completedByBuyer, s.now())
	}, "only a SHIPPED order's receipt is confirmed")
}

// completeTx is the transition SHIPPED → COMPLETED of o in tx; it reports
// whether this caller won it (losing is not an error).
func completeTx(ctx context.Context, tx *ent.Tx, o *Order, reason string, now time.Time) (bool, error) {
	n, err := tx.Order.Update().Where(order.ID(o.ID), order.StatusEQ(enums.OrderShipped)).
		SetStatus(enums.OrderCompleted).SetCompletedAt(now).AddVersion(1).Save(ctx)
	if err != nil || n == 0 {
		return false, err
	}
	return true, Emit(ctx, tx, EventOrderCompleted, o.OrderSn, completedPayload{OrderSn: o.OrderSn, UserID: o.UserID,
		Status: string(enums.OrderCompleted), Reason: reason}, now)
}

type completedPayload struct {
	OrderSn string `json:"orderSn"`
	UserID  string `json:"userId"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
}

// CompleteShipped is the closer's auto-confirm: it completes every order
// SHIPPED more than AutoConfirm ago, reading them in pages of CloseBatch
// (the (status, shipped_at) index) and completing up to claimSize per
// transaction, each by its own CAS. It returns how many this call
// completed; an order a buyer or another closer completed meanwhile is
// passed over.
func (s *Service) CompleteShipped(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.AutoConfirm)
	done := 0
	var after int64
	for {
		var rows []struct {
			ID      int64  `sql:"id"`
			OrderSn string `sql:"order_sn"`
			UserID  string `sql:"user_id"`
		}
		err := s.db.Client.Order.Query().
			Where(order.StatusEQ(enums.OrderShipped), order.ShippedAtLT(cutoff), order.IDGT(after)).
			Order(order.ByID()).Limit(s.cfg.CloseBatch).
			Select(order.FieldID, order.FieldOrderSn, order.FieldUserID).Scan(ctx, &rows)
		if err != nil {
			return done, store.Classify(fmt.Errorf("finding shipped orders to complete: %w", err))
		}
		for start := 0; start < len(rows); start += claimSize {
			claim := rows[start:min(start+claimSize, len(rows))]
			won := 0
			err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
				won = 0
				for _, r := range claim {
					ok, err := completeTx(ctx, tx, &Order{ID: r.ID, OrderSn: r.OrderSn, UserID: r.UserID}, completedByTimer, s.now())
					if err != nil {
						return err
					}
					if ok {
						won++
					}
				}
				return nil
			})
			if err != nil {
				if passEnds(ctx, err) {
					return done, store.Classify(err)
				}
				// Left for the next pass, as the timeout closer leaves an
				// order it could not close.
				slog.ErrorContext(ctx, "auto-confirm: orders not completed", "from", claim[0].ID, "cause", causeOf(err), "err", err)
				continue
			}
			done += won
		}
		if len(rows) < s.cfg.CloseBatch {
			return done, nil
		}
		after = rows[len(rows)-1].ID
	}
}
