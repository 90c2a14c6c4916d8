package checkout

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/orderadjustment"
	"storefront/internal/platform/store"
	"storefront/internal/pricing"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// An order's money is its lines and a list of adjustments (pricing.Quote):
// the coupon's discount, the shipping fee, and whatever kind comes next.
// Each kind is one definition, an Adjuster, that says what it gives an
// order being placed; the rest — the quote, the order_adjustment rows,
// Order.adjustments, the events, the refunds' shares — treats every kind
// alike (docs/checkout.md, "Adding an adjustment kind").

// Adjustment is one adjustment of an order: negative for a discount,
// positive for a fee; its line shares sum to Amount exactly.
type Adjustment struct {
	Kind     enums.AdjustmentKind
	SourceID int64 // what gave it (the customer's coupon); 0: none
	Label    string
	Amount   money.Money
	Lines    []AdjustmentLine // the lines with a share, by ascending SKU
}

// AdjustmentLine is one line's share of an adjustment.
type AdjustmentLine struct {
	ItemID int64
	Amount money.Money
}

// An Adjuster is one kind of adjustment. Read runs once per placement —
// the plain path's order, or a group-commit batch's orders at once —
// through c, before the orders are priced, and reads what the kind needs
// of ins; the Pricer it returns is pure and gives each order its
// adjustment of the kind (nil: none) or the error that refuses the order.
// Kinds apply in the service's order (the coupon first, then
// Config.Adjusters, the shipping fee last), each discount over what the
// lines still cost after the ones before it.
type Adjuster interface {
	Read(ctx context.Context, c *ent.Client, ins []*PlaceInput) (Pricer, error)
}

// A Pricer prices one kind into order o, placed with in: its lines are
// resolved and priced at their unit prices, its adjustments not yet.
type Pricer func(o *Order, in *PlaceInput) (*pricing.Adjustment, error)

// readPricers reads every kind's terms for ins.
func (s *Service) readPricers(ctx context.Context, c *ent.Client, ins []*PlaceInput) ([]Pricer, error) {
	out := make([]Pricer, 0, len(s.adjusters))
	for _, a := range s.adjusters {
		p, err := a.Read(ctx, c, ins)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// price quotes o once: its lines, each kind's adjustment, the shipping fee
// last; and sets its money from the quote.
func price(o *Order, in *PlaceInput, pricers []Pricer) error {
	lines := make([]pricing.Line, len(o.Lines))
	for i, l := range o.Lines {
		lines[i] = pricing.Line{UnitPrice: l.UnitPrice, Quantity: l.Quantity}
	}
	var adjs []pricing.Adjustment
	for _, p := range pricers {
		a, err := p(o, in)
		if err != nil {
			return err
		}
		if a != nil {
			adjs = append(adjs, *a)
		}
	}
	if o.ShippingFee != 0 {
		adjs = append(adjs, shippingAdjustment(o.ShippingFee))
	}
	q, err := pricing.Quote(lines, adjs)
	if err != nil {
		return err
	}
	o.setMoney(&q)
	return nil
}

// setMoney sets o's money from its quote: subtotal, amount, the derived
// sums (discount, shipping fee, each line's discount) and the adjustments
// with their non-zero shares.
func (o *Order) setMoney(q *pricing.Quoted) {
	o.Subtotal, o.Amount, o.Discount, o.ShippingFee = q.Subtotal, q.Amount, q.Discount(), q.Fees()
	o.setAdjustments(q)
	for i, l := range o.Lines {
		l.Discount = q.LineDiscount(i)
	}
}

// setAdjustments sets o's adjustments from q's (Adjustments).
func (o *Order) setAdjustments(q *pricing.Quoted) {
	o.Adjustments = Adjustments(q, func(i int) int64 { return o.Lines[i].ItemID })
}

// Adjustments are q's adjustments as clients see them, each with its
// non-zero shares; item gives the SKU of line i. A cart's cost says them
// as its order would.
func Adjustments(q *pricing.Quoted, item func(i int) int64) []*Adjustment {
	out := make([]*Adjustment, 0, len(q.Adjustments))
	for _, a := range q.Adjustments {
		adj := &Adjustment{Kind: a.Kind, SourceID: a.SourceID, Label: a.Label, Amount: a.Amount}
		for i, s := range a.Shares {
			if s != 0 {
				adj.Lines = append(adj.Lines, AdjustmentLine{ItemID: item(i), Amount: s})
			}
		}
		out = append(out, adj)
	}
	return out
}

// shippingAdjustment is the shipping fee's kind: the fee the freight
// templates ask for the buyer's address (shipTo), split over the lines by
// subtotal. It is not a line's money: refunds of lines leave it, and it
// comes back only with the order's unshipped whole (internal/aftersale).
func shippingAdjustment(fee money.Money) pricing.Adjustment {
	return pricing.Adjustment{Kind: enums.AdjustShipping, Label: "Shipping", Amount: fee}
}

// linePaidTx is what line l was charged, from its order's adjustment rows
// of the line (read in the caller's transaction).
func linePaidTx(ctx context.Context, tx *ent.Tx, l *ent.OrderLine) (money.Money, error) {
	rows, err := tx.OrderAdjustment.Query().Where(orderadjustment.OrderID(l.OrderID), orderadjustment.ItemID(l.ItemID)).All(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the adjustments of line %d: %w", l.ID, err)
	}
	return linePaid(adjustmentsOf(rows), &OrderLine{ItemID: l.ItemID, UnitPrice: l.UnitPrice, Quantity: l.Quantity}), nil
}

// linePaid is what line l of o was charged: its subtotal less its share of
// every discount, from o's adjustments. Refunds take what they return of
// the line from this (pricing.Refundable).
func linePaid(adjs []*Adjustment, l *OrderLine) money.Money {
	paid := l.UnitPrice * money.Money(l.Quantity)
	for _, a := range adjs {
		if a.Amount >= 0 {
			continue
		}
		for _, s := range a.Lines {
			if s.ItemID == l.ItemID {
				paid += s.Amount
			}
		}
	}
	return paid
}

// adjustmentsOf groups an order's adjustment rows (in the order written)
// into its adjustments: the rows of one kind and source, their shares by
// ascending SKU.
func adjustmentsOf(rows []*ent.OrderAdjustment) []*Adjustment {
	var out []*Adjustment
	for _, r := range rows {
		var a *Adjustment
		for _, b := range out {
			if b.Kind == r.Kind && b.SourceID == r.SourceID {
				a = b
				break
			}
		}
		if a == nil {
			a = &Adjustment{Kind: r.Kind, SourceID: r.SourceID, Label: r.Label}
			out = append(out, a)
		}
		a.Amount += r.Amount
		a.Lines = append(a.Lines, AdjustmentLine{ItemID: r.ItemID, Amount: r.Amount})
	}
	for _, a := range out {
		slices.SortFunc(a.Lines, func(x, y AdjustmentLine) int { return cmp.Compare(x.ItemID, y.ItemID) })
	}
	return out
}

// reshipTx makes fee o's SHIPPING adjustment, in the transaction of the
// CAS that gave the UNPAID order its address and amount: its rows replaced
// by fee's shares, as the quote splits a fee.
func reshipTx(ctx context.Context, tx *ent.Tx, o *Order, fee money.Money) error {
	if _, err := tx.OrderAdjustment.Delete().Where(orderadjustment.OrderID(o.ID), orderadjustment.Kind(enums.AdjustShipping)).Exec(ctx); err != nil {
		return fmt.Errorf("replacing the shipping fee of order %s: %w", o.OrderSn, err)
	}
	if fee == 0 {
		return nil
	}
	lines := make([]pricing.Line, len(o.Lines))
	for i, l := range o.Lines {
		lines[i] = pricing.Line{UnitPrice: l.UnitPrice, Quantity: l.Quantity}
	}
	q, err := pricing.Quote(lines, []pricing.Adjustment{shippingAdjustment(fee)})
	if err != nil {
		return err
	}
	shipped := &Order{ID: o.ID, OrderSn: o.OrderSn, Lines: o.Lines}
	shipped.setAdjustments(&q)
	rows := adjustmentRows(shipped)
	if rows == nil {
		return nil
	}
	if err := store.Exec(ctx, tx, rows); err != nil {
		return fmt.Errorf("writing the shipping fee of order %s: %w", o.OrderSn, err)
	}
	return nil
}
