package store

import (
	"context"
	"fmt"
)

// Migrate creates or upgrades the schema. It never drops anything, so an
// older binary's migrate against a newer schema is harmless too
// (docs/operations.md, "Migrations").
//
// Data steps that a new column needs run here, after ent's step. Each is
// written to be safe to run again on every migrate, by any number of
// instances at once: ent's ALTER TABLE commits on its own on MySQL, so a
// process that dies after it must find the step still due, and a step must
// never move a value back.
func (d *DB) Migrate(ctx context.Context) error {
	if err := d.Client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	// sku.stock_version splits the SKU's one version into the
	// terms' and the stock's. Before it, every stock movement and every
	// terms edit moved sku.version; an admin may hold a version read from
	// an older binary for either form, so both versions start at it. The
	// column is added with DEFAULT 0 and every SKU made since starts at 1,
	// so 0 means "not copied yet" and the copy matches nothing once done.
	if _, err := d.SQL.ExecContext(ctx, "UPDATE sku SET stock_version = version WHERE stock_version = 0"); err != nil {
		return fmt.Errorf("migrating schema: starting sku.stock_version at sku.version: %w", err)
	}
	for _, q := range ledgerBackfill {
		if _, err := d.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrating schema: booking the money that moved before the money ledger: %w", err)
		}
	}
	for _, q := range adjustmentBackfill {
		if _, err := d.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrating schema: writing the adjustments of orders placed before order_adjustment: %w", err)
		}
	}
	return nil
}

// adjustmentBackfill writes the adjustment rows (order_adjustment,
// checkout's table) of orders placed before an order's money was a list of
// adjustments, from the sums they stored: each line's coupon discount a
// COUPON share, the shipping fee a SHIPPING adjustment on the order's
// first line. Each writes only for orders with no row of its kind, so it
// runs again harmlessly on every migrate.
var adjustmentBackfill = []string{
	`INSERT INTO order_adjustment (order_id, item_id, kind, source_id, label, amount)
SELECT l.order_id, l.item_id, 'COUPON', COALESCE(o.user_coupon_id, 0),
  COALESCE((SELECT c.name FROM user_coupon uc JOIN coupon c ON c.id = uc.coupon_id WHERE uc.id = o.user_coupon_id), ''), -l.discount
FROM order_line l JOIN orders o ON o.id = l.order_id
WHERE l.discount > 0 AND NOT EXISTS (SELECT 1 FROM order_adjustment a WHERE a.order_id = l.order_id AND a.kind = 'COUPON')`,
	`INSERT INTO order_adjustment (order_id, item_id, kind, source_id, label, amount)
SELECT o.id, (SELECT MIN(l.item_id) FROM order_line l WHERE l.order_id = o.id), 'SHIPPING', 0, 'Shipping', o.shipping_fee
FROM orders o
WHERE o.shipping_fee > 0 AND NOT EXISTS (SELECT 1 FROM order_adjustment a WHERE a.order_id = o.id AND a.kind = 'SHIPPING')`,
}

// ledgerBackfill books on the money ledger (money_entry, payments' table)
// the money that moved before it existed, from the rows that recorded it:
// each paying payment a CHARGE, each other payment seen PAID an EXTRA, each
// confirmed refund a REFUND, and what a REFUNDED order got back beyond its
// refunds (a whole payment refunded at the provider) a REFUND under
// "payment:<id>". Each statement books only what has no entry yet, so it
// runs again harmlessly, on every migrate, by any number of instances (the
// business key refuses a second row).
var ledgerBackfill = []string{
	`INSERT INTO money_entry (order_id, order_sn, kind, amount, currency, provider, reference, created_at)
SELECT p.order_id, p.order_sn, 'CHARGE', p.amount, p.currency, p.provider, p.payment_id, COALESCE(p.paid_at, p.created_at)
FROM payment p JOIN orders o ON o.paid_payment_id = p.id AND o.id = p.order_id
WHERE NOT EXISTS (SELECT 1 FROM money_entry m WHERE m.kind = 'CHARGE' AND m.provider = p.provider AND m.reference = p.payment_id)`,
	`INSERT INTO money_entry (order_id, order_sn, kind, amount, currency, provider, reference, created_at)
SELECT p.order_id, p.order_sn, 'EXTRA', p.amount, p.currency, p.provider, p.payment_id, COALESCE(p.paid_at, p.created_at)
FROM payment p JOIN orders o ON o.id = p.order_id
WHERE p.paid_at IS NOT NULL AND o.paid_payment_id IS NOT NULL AND o.paid_payment_id <> p.id
  AND NOT EXISTS (SELECT 1 FROM money_entry m WHERE m.kind = 'EXTRA' AND m.provider = p.provider AND m.reference = p.payment_id)`,
	`INSERT INTO money_entry (order_id, order_sn, kind, amount, currency, provider, reference, created_at)
SELECT r.order_id, r.order_sn, 'REFUND', -r.amount, r.currency, r.provider, r.refund_no, COALESCE(r.settled_at, r.created_at)
FROM refund r WHERE r.status = 'SUCCEEDED'
  AND NOT EXISTS (SELECT 1 FROM money_entry m WHERE m.kind = 'REFUND' AND m.provider = r.provider AND m.reference = r.refund_no)`,
	`INSERT INTO money_entry (order_id, order_sn, kind, amount, currency, provider, reference, created_at)
SELECT o.id, o.order_sn, 'REFUND', -(o.refunded_amount - COALESCE((SELECT SUM(r.amount) FROM refund r WHERE r.order_id = o.id AND r.status = 'SUCCEEDED'), 0)),
  o.currency, p.provider, CONCAT('payment:', p.payment_id), COALESCE(o.closed_at, o.created_at)
FROM orders o JOIN payment p ON p.id = o.paid_payment_id
WHERE o.status = 'REFUNDED' AND o.refunded_amount > COALESCE((SELECT SUM(r.amount) FROM refund r WHERE r.order_id = o.id AND r.status = 'SUCCEEDED'), 0)
  AND NOT EXISTS (SELECT 1 FROM money_entry m WHERE m.kind = 'REFUND' AND m.provider = p.provider AND m.reference = CONCAT('payment:', p.payment_id))`,
}
