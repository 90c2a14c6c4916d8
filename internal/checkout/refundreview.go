package checkout

import (
	"context"
	"fmt"
	"log/slog"

	"storefront/ent"
	"storefront/ent/order"
)

// FlagRefundReviewTx flags order orderID for a person when what a provider
// said of a refund contradicts what the shop has booked and the code
// cannot settle it: money returned twice for the same after-sale, a refund
// whose outcome at the provider is unknown after another one of the same
// after-sale was confirmed, a failure reported after a confirmation. The
// order keeps its status and its money as booked, whatever that status is
// (a REFUNDED order too: the money is where the person looks); the flag
// and the warning, naming the refund and why, are what say it. It sets
// needs_review once and logs every contradiction.
func FlagRefundReviewTx(ctx context.Context, tx *ent.Tx, orderID int64, refundNo, why string) error {
	if err := tx.Order.Update().Where(order.ID(orderID), order.NeedsReview(false)).
		SetNeedsReview(true).AddVersion(1).Exec(ctx); err != nil {
		return fmt.Errorf("flagging order %d for review: %w", orderID, err)
	}
	o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldOrderSn).Only(ctx)
	if err != nil {
		return fmt.Errorf("loading flagged order %d: %w", orderID, err)
	}
	slog.WarnContext(ctx, "a refund the provider reported contradicts the books: review by hand",
		"orderSn", o.OrderSn, "refundNo", refundNo, "why", why)
	return nil
}
