package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/predicate"
	"storefront/ent/schema"
	"storefront/ent/shipment"
	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
)

// Shipments: an admin ships some or all of a paid order's units
// with a carrier and a tracking number. Each shipment is one transaction:
//
//  1. the order's row, by a CAS that only a PAID or PARTIALLY_SHIPPED order
//     passes (version + 1): it locks the row, so the shipments of one
//     order run one after another, and a close, refund or payment of it
//     waits for the shipment or the shipment for them;
//  2. per line, ascending, shipped_quantity += n by a CAS that keeps it at
//     most the line's quantity: however many admins race, no unit ships
//     twice;
//  3. the shipment's row, the order's new status (SHIPPED when every unit
//     has shipped, with shipped_at, else PARTIALLY_SHIPPED) and one
//     OrderShipped event carrying the shipment.
//
// Shipping touches no stock (the units left stock when they were ordered or
// paid) and takes no goods lock: the order's row is its first lock, its
// lines' rows after it, as a payment and a close take them.

// Event types of shipping, written through Emit as every order event.
const (
	EventOrderShipped   = "OrderShipped"   // a shipment (PAID or PARTIALLY_SHIPPED → PARTIALLY_SHIPPED or SHIPPED)
	EventOrderCompleted = "OrderCompleted" // SHIPPED → COMPLETED (receipt.go)
)

// MaxShipments is the most shipments one order may have (Order.shipments is
// a list).
const MaxShipments = 20

// ShipInput is an admin's shipment of an order: Lines nil ships every unit
// not yet shipped.
type ShipInput struct {
	OrderSn    string
	Carrier    string
	TrackingNo string
	Lines      []ShipLine
}

// ShipLine is the units of one line (by SKU) a shipment carries.
type ShipLine struct {
	ItemID   int64 `json:"itemId,string"`
	Quantity int64 `json:"quantity"`
}

// Shipment is one parcel of an order.
type Shipment struct {
	ID         int64      `json:"id,string"`
	Carrier    string     `json:"carrier"`
	TrackingNo string     `json:"trackingNo"`
	Lines      []ShipLine `json:"lines"`
	ShippedAt  time.Time  `json:"shippedAt"`
}

// Ship ships in: INVALID_ORDER_STATE unless the order is PAID or
// PARTIALLY_SHIPPED, ADDRESS_REQUIRED when it has no address, INVALID_INPUT
// for a line it does not have or more units than ordered minus shipped.
func (s *Service) Ship(ctx context.Context, in ShipInput) (*Order, error) {
	if err := in.check(s.cfg.MaxLines); err != nil {
		return nil, err
	}
	o, err := s.load(ctx, in.OrderSn)
	if err != nil {
		return nil, err
	}
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		return s.shipTx(ctx, tx, o.ID, in)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.load(ctx, in.OrderSn)
}

func (s *Service) shipTx(ctx context.Context, tx *ent.Tx, orderID int64, in ShipInput) error {
	n, err := tx.Order.Update().Where(order.ID(orderID), order.StatusIn(enums.OrderPaid, enums.OrderPartiallyShipped)).
		AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("locking order %s: %w", in.OrderSn, err)
	}
	cur, err := loadTx(ctx, tx, orderID)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: order %s is %s; only a PAID or PARTIALLY_SHIPPED order ships", ErrInvalidOrderState, in.OrderSn, cur.Status)
	}
	if cur.ShippingAddress == nil {
		return fmt.Errorf("%w: order %s has no address: its buyer gives one with setOrderAddress", shipping.ErrAddressRequired, in.OrderSn)
	}
	parcel, err := parcelOf(cur, in)
	if err != nil {
		return err
	}
	if len(parcel) == 0 {
		return fmt.Errorf("%w: order %s has nothing left to ship", ErrInvalidInput, in.OrderSn)
	}
	count, err := tx.Shipment.Query().Where(shipment.OrderID(orderID)).Count(ctx)
	if err != nil {
		return err
	}
	if count >= MaxShipments {
		return fmt.Errorf("%w: order %s has %d shipments already, the most one order may have", ErrInvalidInput, in.OrderSn, count)
	}
	byItem := make(map[int64]*OrderLine, len(cur.Lines))
	for _, l := range cur.Lines {
		byItem[l.ItemID] = l
	}
	left := int64(0)
	for _, p := range parcel {
		l := byItem[p.ItemID]
		n, err := tx.OrderLine.Update().
			Where(orderline.ID(l.id), shippedFits(p.Quantity)).
			AddShippedQuantity(p.Quantity).Save(ctx)
		if err != nil {
			return fmt.Errorf("shipping line %d: %w", l.id, err)
		}
		if n == 0 {
			return fmt.Errorf("%w: SKU %d of order %s: %d more would ship more than the %d ordered", ErrInvalidInput, p.ItemID, in.OrderSn, p.Quantity, l.Quantity)
		}
		l.ShippedQuantity += p.Quantity
	}
	for _, l := range cur.Lines {
		left += l.Quantity - l.ShippedQuantity - l.WithheldQuantity
	}
	now := s.now()
	stored := make([]schema.ShipmentLine, len(parcel))
	for i, p := range parcel {
		stored[i] = schema.ShipmentLine{ItemID: p.ItemID, Quantity: p.Quantity}
	}
	row, err := tx.Shipment.Create().SetOrderID(orderID).SetCarrier(in.Carrier).SetTrackingNo(in.TrackingNo).
		SetLines(stored).SetShippedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("writing the shipment of order %s: %w", in.OrderSn, err)
	}
	u := tx.Order.UpdateOneID(orderID).SetStatus(enums.OrderPartiallyShipped)
	status := enums.OrderPartiallyShipped
	if left == 0 {
		status = enums.OrderShipped
		u.SetStatus(status).SetShippedAt(now)
	}
	if err := u.Exec(ctx); err != nil {
		return fmt.Errorf("moving order %s to %s: %w", in.OrderSn, status, err)
	}
	return Emit(ctx, tx, EventOrderShipped, cur.OrderSn, shippedPayload{OrderSn: cur.OrderSn, UserID: cur.UserID, Status: string(status),
		Shipment: Shipment{ID: row.ID, Carrier: row.Carrier, TrackingNo: row.TrackingNo, Lines: parcel, ShippedAt: now}}, now)
}

// shippedFits holds while n more units keep the line's shipped quantity at
// most its quantity less the units refunded unshipped (withheld by an
// after-sale: they never ship).
func shippedFits(n int64) predicate.OrderLine {
	return func(s *entsql.Selector) {
		s.Where(entsql.ExprP(s.C(orderline.FieldShippedQuantity)+" + "+s.C(orderline.FieldWithheldQuantity)+" + ? <= "+s.C(orderline.FieldQuantity), n))
	}
}

type shippedPayload struct {
	OrderSn  string   `json:"orderSn"`
	UserID   string   `json:"userId"`
	Status   string   `json:"status"`
	Shipment Shipment `json:"shipment"`
}

// parcelOf is what in ships of o, in ascending SKU order: the lines named,
// or every unit not yet shipped.
func parcelOf(o *Order, in ShipInput) ([]ShipLine, error) {
	var out []ShipLine
	if in.Lines == nil {
		for _, l := range ascending(o.Lines) {
			if left := l.Quantity - l.ShippedQuantity - l.WithheldQuantity; left > 0 {
				out = append(out, ShipLine{ItemID: l.ItemID, Quantity: left})
			}
		}
		return out, nil
	}
	have := map[int64]*OrderLine{}
	for _, l := range o.Lines {
		have[l.ItemID] = l
	}
	for _, p := range in.Lines {
		l := have[p.ItemID]
		if l == nil {
			return nil, fmt.Errorf("%w: order %s has no line of SKU %d", ErrInvalidInput, o.OrderSn, p.ItemID)
		}
		if left := l.Quantity - l.ShippedQuantity - l.WithheldQuantity; p.Quantity > left {
			return nil, fmt.Errorf("%w: SKU %d of order %s: %d ordered, %d shipped, %d refunded unshipped, %d left; %d asked",
				ErrInvalidInput, p.ItemID, o.OrderSn, l.Quantity, l.ShippedQuantity, l.WithheldQuantity, left, p.Quantity)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b ShipLine) int { return int(a.ItemID - b.ItemID) })
	return out, nil
}

// check validates a shipment's shape without the database.
func (in *ShipInput) check(maxLines int) error {
	in.Carrier, in.TrackingNo = strings.TrimSpace(in.Carrier), strings.TrimSpace(in.TrackingNo)
	for _, f := range []struct{ what, v string }{{"carrier", in.Carrier}, {"trackingNo", in.TrackingNo}} {
		if f.v == "" || utf8.RuneCountInString(f.v) > 64 {
			return fmt.Errorf("%w: %s: 1 to 64 characters", ErrInvalidInput, f.what)
		}
	}
	if in.Lines != nil && (len(in.Lines) == 0 || len(in.Lines) > maxLines) {
		return fmt.Errorf("%w: lines: 1 to %d, or leave them out to ship everything not yet shipped", ErrInvalidInput, maxLines)
	}
	seen := map[int64]bool{}
	for i, l := range in.Lines {
		if l.Quantity < 1 {
			return fmt.Errorf("%w: line %d: quantity %d, want at least 1", ErrInvalidInput, i+1, l.Quantity)
		}
		if seen[l.ItemID] {
			return fmt.Errorf("%w: SKU %d is named twice", ErrInvalidInput, l.ItemID)
		}
		seen[l.ItemID] = true
	}
	return nil
}

// Shipments returns the shipments of o, oldest first: those LoadShipments
// read with o's page, or read now.
func (s *Service) Shipments(ctx context.Context, o *Order) ([]*Shipment, error) {
	if o.shipments != nil {
		return o.shipments, nil
	}
	if err := s.LoadShipments(ctx, []*Order{o}); err != nil {
		return nil, err
	}
	return o.shipments, nil
}

// LoadShipments reads the shipments of orders in one query and keeps each
// order's with it: a page of orders asking for its shipments is two reads,
// not one per order.
func (s *Service) LoadShipments(ctx context.Context, orders []*Order) error {
	if len(orders) == 0 {
		return nil
	}
	ids := make([]int64, len(orders))
	by := make(map[int64]*Order, len(orders))
	for i, o := range orders {
		ids[i], by[o.ID] = o.ID, o
		o.shipments = []*Shipment{}
	}
	rows, err := s.db.Client.Shipment.Query().Where(shipment.OrderIDIn(ids...)).Order(shipment.ByID()).All(ctx)
	if err != nil {
		return store.Classify(fmt.Errorf("reading shipments: %w", err))
	}
	for _, r := range rows {
		sh := &Shipment{ID: r.ID, Carrier: r.Carrier, TrackingNo: r.TrackingNo, ShippedAt: r.ShippedAt, Lines: make([]ShipLine, len(r.Lines))}
		for j, l := range r.Lines {
			sh.Lines[j] = ShipLine{ItemID: l.ItemID, Quantity: l.Quantity}
		}
		if o := by[r.OrderID]; o != nil {
			o.shipments = append(o.shipments, sh)
		}
	}
	return nil
}
