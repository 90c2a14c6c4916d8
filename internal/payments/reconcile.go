package payments

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
)

// MoneyDiff is one way an order's money disagrees with its books.
type MoneyDiff struct {
	OrderSn string
	Check   string // which rule (docs/operations.md, "A money difference")
	Detail  string
	// Review: the order is flagged needsReview, so a person already has
	// it: its balance is reported, not counted as a fault.
	Review bool
}

func (d MoneyDiff) String() string {
	flag := ""
	if d.Review {
		flag = " (flagged for review)"
	}
	return fmt.Sprintf("money: order %s: %s: %s%s", d.OrderSn, d.Check, d.Detail, flag)
}

// moneyChecks are the money ledger's rules, each a query of the orders
// that break it: order_sn, a detail, needs_review. Plain SQL that every
// engine runs the same way (CONCAT is in SQLite since 3.44).
var moneyChecks = []struct{ name, query string }{
	{"charge", // the payment that paid an order is one CHARGE of its amount, the order's amount
		`SELECT o.order_sn, CONCAT(p.provider, ' ', p.payment_id), o.needs_review FROM orders o JOIN payment p ON p.id = o.paid_payment_id
WHERE p.order_id <> o.id OR p.amount <> o.amount OR 1 <> (SELECT COUNT(*) FROM money_entry m
  WHERE m.kind = 'CHARGE' AND m.provider = p.provider AND m.reference = p.payment_id AND m.order_id = o.id AND m.amount = p.amount)`},
	{"extra", // a payment seen PAID that did not pay its order is one EXTRA of its amount
		`SELECT o.order_sn, CONCAT(p.provider, ' ', p.payment_id), o.needs_review FROM payment p JOIN orders o ON o.id = p.order_id
WHERE p.paid_at IS NOT NULL AND o.paid_payment_id IS NOT NULL AND o.paid_payment_id <> p.id AND 1 <> (SELECT COUNT(*) FROM money_entry m
  WHERE m.kind = 'EXTRA' AND m.provider = p.provider AND m.reference = p.payment_id AND m.order_id = o.id AND m.amount = p.amount)`},
	{"payment entry without its payment", // every CHARGE and EXTRA is a payment of that order and amount
		`SELECT m.order_sn, CONCAT(m.kind, ' ', m.reference), FALSE FROM money_entry m WHERE m.kind IN ('CHARGE', 'EXTRA') AND NOT EXISTS (
  SELECT 1 FROM payment p WHERE p.provider = m.provider AND p.payment_id = m.reference AND p.order_id = m.order_id AND p.amount = m.amount)`},
	{"refund", // a refund the provider confirmed is booked once, for its amount
		`SELECT r.order_sn, r.refund_no, FALSE FROM refund r WHERE r.status = 'SUCCEEDED' AND 1 <> (SELECT COUNT(*) FROM money_entry m
  WHERE m.kind = 'REFUND' AND m.provider = r.provider AND m.reference = r.refund_no AND m.order_id = r.order_id AND m.amount = -r.amount)`},
	{"refund the provider confirmed", // the provider's last word on a refund is a success: it is SUCCEEDED here
		`SELECT r.order_sn, r.refund_no, FALSE FROM refund r WHERE r.provider_status = 'SUCCEEDED' AND r.status <> 'SUCCEEDED'`},
	{"refund entry without its refund", // every REFUND is a confirmed refund, or a payment refunded at the provider
		`SELECT m.order_sn, m.reference, FALSE FROM money_entry m WHERE m.kind = 'REFUND' AND m.reference NOT LIKE 'payment:%' AND NOT EXISTS (
  SELECT 1 FROM refund r WHERE r.provider = m.provider AND r.refund_no = m.reference AND r.status = 'SUCCEEDED' AND r.order_id = m.order_id)`},
	{"balance", // what went back is what the order says it refunded, never more than it was paid or reserved
		`SELECT o.order_sn, CONCAT(o.refunded_amount, ' refunded, ledger ', -(SELECT COALESCE(SUM(m.amount), 0) FROM money_entry m WHERE m.order_id = o.id AND m.kind = 'REFUND')), o.needs_review
FROM orders o WHERE o.refunded_amount > o.amount OR o.refunded_amount > o.refund_reserved
  OR o.refunded_amount <> -(SELECT COALESCE(SUM(m.amount), 0) FROM money_entry m WHERE m.order_id = o.id AND m.kind = 'REFUND')
  OR (o.refunded_amount > 0 AND o.paid_payment_id IS NULL AND o.paid_at IS NULL)`},
	{"whole refund of shipped units", // refundOrder refunds only units that had not shipped
		`SELECT a.order_sn, a.after_sale_sn, FALSE FROM after_sale a WHERE a.whole = TRUE AND a.status IN ('REFUNDING', 'REFUNDED')
  AND EXISTS (SELECT 1 FROM after_sale_line l WHERE l.after_sale_id = a.id AND l.withheld <> l.quantity)`},
	{"fee refunded after shipping", // the shipping fee goes back only when nothing shipped
		`SELECT a.order_sn, a.after_sale_sn, FALSE FROM after_sale a WHERE a.shipping_fee > 0 AND a.status IN ('REFUNDING', 'REFUNDED')
  AND EXISTS (SELECT 1 FROM order_line l WHERE l.order_id = a.order_id AND l.shipped_quantity > 0)`},
	{"line units", // no unit both ships and is refunded unshipped; no line in after-sales beyond what was bought
		`SELECT o.order_sn, CONCAT(ol.item_id, ' SKU, shipped ', ol.shipped_quantity, ', withheld ', ol.withheld_quantity, ' of ', ol.quantity), FALSE
FROM order_line ol JOIN orders o ON o.id = ol.order_id
WHERE ol.shipped_quantity + ol.withheld_quantity > ol.quantity OR ol.after_sale_quantity > ol.quantity OR ol.withheld_quantity > ol.after_sale_quantity`},
	{"refund above what the units paid", // an after-sale's lines never refund more than their line paid
		`SELECT o.order_sn, CONCAT(ol.item_id, ' SKU, refunding ', ol.after_sale_amount), FALSE FROM order_line ol JOIN orders o ON o.id = ol.order_id
WHERE ol.after_sale_amount > ol.unit_price * ol.quantity - ol.discount
  OR ol.after_sale_amount <> (SELECT COALESCE(SUM(l.amount), 0) FROM after_sale_line l JOIN after_sale a ON a.id = l.after_sale_id
    WHERE l.order_line_id = ol.id AND a.status NOT IN ('REJECTED', 'CANCELLED'))`},
}

// ReconcileMoney lists every order whose money disagrees with the money
// ledger (MoneyDiff.Check names the rule). It corrects nothing.
func (s *Service) ReconcileMoney(ctx context.Context) ([]MoneyDiff, error) {
	var out []MoneyDiff
	for _, c := range moneyChecks {
		rs, err := s.db.SQL.QueryContext(ctx, c.query)
		if err != nil {
			return nil, store.Classify(fmt.Errorf("reconciling money (%s): %w", c.name, err))
		}
		for rs.Next() {
			d := MoneyDiff{Check: c.name}
			if err := rs.Scan(&d.OrderSn, &d.Detail, &d.Review); err != nil {
				rs.Close()
				return nil, err
			}
			out = append(out, d)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
