package checkout

import (
	"context"
	"time"

	"storefront/ent/idempotency"
	"storefront/ent/order"
	"storefront/ent/orderadjustment"
	"storefront/ent/orderline"
	"storefront/internal/inventory"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// The one definition of each row checkout writes. The plain path, the
// SQLite batch and the MySQL batch's statement all render these (store.Insert
// with bound arguments, store.Text inline); the column names are ent's.

// write is an order's row; close_reason, needs_review and version start at
// their defaults.
func (o *Order) write(v store.Values) {
	v.Str(order.FieldOrderSn, o.OrderSn)
	v.Str(order.FieldUserID, o.UserID)
	v.Str(order.FieldStatus, string(o.Status))
	v.Int(order.FieldAmount, int64(o.Amount))
	v.Int(order.FieldSubtotal, int64(o.Subtotal))
	v.Int(order.FieldDiscount, int64(o.Discount))
	// Always written (NULL for none): a batch's multi-row insert holds
	// orders with a coupon and without.
	if o.UserCouponID != 0 {
		v.Int(order.FieldUserCouponID, o.UserCouponID)
	} else {
		v.Raw(order.FieldUserCouponID, "NULL")
	}
	v.Str(order.FieldCurrency, o.Currency)
	v.Str(order.FieldRemark, o.Remark)
	v.Time(order.FieldCreatedAt, o.CreatedAt)
	v.Time(order.FieldExpiresAt, o.ExpiresAt)
	// Only when set: a batch's orders ship nowhere, and its multi-row
	// insert keeps the columns of the row before (shipto.go).
	if o.ShippingFee != 0 {
		v.Int(order.FieldShippingFee, int64(o.ShippingFee))
	}
	if o.ShippingAddress != nil {
		v.Str(order.FieldShippingAddress, addressJSON(o.ShippingAddress))
	}
}

// orderByNumber finds an order written in the same statement or
// transaction by its number (unique), never by an id counted on from
// LAST_INSERT_ID().
const orderByNumber = "(SELECT id FROM orders WHERE order_sn = ?)"

// orderRef sets col to o's id: the id when it is known, else found by number.
func orderRef(v store.Values, col string, o *Order) {
	if o.ID != 0 {
		v.Int(col, o.ID)
		return
	}
	v.Lookup(col, orderByNumber, o.OrderSn)
}

// writeLine is a line of order o.
func writeLine(v store.Values, o *Order, l *OrderLine) {
	orderRef(v, orderline.FieldOrderID, o)
	l.writeTerms(v)
}

// writeTerms is the rest of a line's row: every column but its order's id.
func (l *OrderLine) writeTerms(v store.Values) {
	v.Int(orderline.FieldItemID, l.ItemID)
	v.Int(orderline.FieldGoodsID, l.GoodsID)
	v.Str(orderline.FieldGoodsName, l.GoodsName)
	v.Str(orderline.FieldSpecValueStr, l.SpecValueStr)
	v.Int(orderline.FieldUnitPrice, int64(l.UnitPrice))
	v.Int(orderline.FieldQuantity, l.Quantity)
	v.Str(orderline.FieldStockMode, string(l.StockMode))
	v.Str(orderline.FieldLockState, string(l.newLockState()))
	v.Int(orderline.FieldPoolID, l.PoolID)
	v.Int(orderline.FieldDiscount, int64(l.Discount))
	v.Raw(orderline.FieldPurchaseCounted, sqlBool[l.counted])
}

// share is one row of order_adjustment: a line's share of an adjustment.
type share struct {
	o *Order
	a *Adjustment
	l AdjustmentLine
}

// write is the row of the share.
func (r share) write(v store.Values) {
	orderRef(v, orderadjustment.FieldOrderID, r.o)
	v.Int(orderadjustment.FieldItemID, r.l.ItemID)
	v.Str(orderadjustment.FieldKind, string(r.a.Kind))
	v.Int(orderadjustment.FieldSourceID, r.a.SourceID)
	v.Str(orderadjustment.FieldLabel, r.a.Label)
	v.Int(orderadjustment.FieldAmount, int64(r.l.Amount))
}

// sharesOf are the adjustment rows of orders (none for an order without
// adjustments: on a hot SKU's batch, usually none at all).
func sharesOf(orders ...*Order) []share {
	var out []share
	for _, o := range orders {
		for _, a := range o.Adjustments {
			for _, l := range a.Lines {
				out = append(out, share{o, a, l})
			}
		}
	}
	return out
}

// adjustmentRows is the one INSERT of the adjustment rows of orders, or
// nil when they have none.
func adjustmentRows(orders ...*Order) *store.Insert {
	rows := sharesOf(orders...)
	if len(rows) == 0 {
		return nil
	}
	in := store.NewInsert(orderadjustment.Table)
	for _, r := range rows {
		in.Row(r.write)
	}
	return in
}

// writeAdjustments writes the adjustment rows of orders into a batch's
// statement text, ended by "; " (nothing when they have none).
func writeAdjustments(q *store.Text, orders []*Order) {
	rows := sharesOf(orders...)
	if len(rows) == 0 {
		return
	}
	q.Insert(orderadjustment.Table, len(rows), func(j int, v store.Values) { rows[j].write(v) })
	q.SQL("; ")
}

// newLockState is where a new line's units are: locked for a lock-at-order line.
func (l *OrderLine) newLockState() enums.LockState {
	if l.StockMode == enums.LockAtOrder {
		return enums.LockHeld
	}
	return enums.LockNone
}

// keyRecord is an idempotency record; orderSn is empty while PENDING.
type keyRecord struct {
	user, key, hash, state  string
	lease, created, expires time.Time
	orderSn                 string
}

func (r *keyRecord) write(v store.Values) {
	v.Str(idempotency.FieldUserID, r.user)
	v.Str(idempotency.FieldKey, r.key)
	v.Str(idempotency.FieldRequestHash, r.hash)
	v.Str(idempotency.FieldState, r.state)
	v.Time(idempotency.FieldLeaseUntil, r.lease)
	if r.orderSn != "" {
		v.Str(idempotency.FieldOrderSn, r.orderSn)
	}
	v.Time(idempotency.FieldCreatedAt, r.created)
	v.Time(idempotency.FieldExpiresAt, r.expires)
}

// doneRecord is the DONE record of t's order, written with the order.
func (s *Service) doneRecord(t *ticket, now time.Time) *keyRecord {
	return &keyRecord{user: t.in.UserID, key: t.key, hash: t.hash, state: stateDone,
		lease: now.Add(s.cfg.Lease), created: now, expires: now.Add(t.keep), orderSn: t.order.OrderSn}
}

// eventRecord is an outbox row of checkout's events (outbox.Record), written
// as checkout's other rows are.
type eventRecord struct{ *outbox.Record }

func (e *eventRecord) write(v store.Values) { e.Record.Write(v) }

// sale is the stock movement of line l of order o, on the terms it was
// resolved at.
func sale(o *Order, l *OrderLine) inventory.Sale {
	return inventory.Sale{
		Movement: inventory.Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: -l.Quantity, Type: inventory.OrderDeduct,
			BizType: inventory.BizOrder, BizSn: o.OrderSn, At: o.CreatedAt, PoolID: l.PoolID},
		Terms: inventory.Terms{Price: l.UnitPrice, SpecText: l.SpecValueStr, GoodsName: l.GoodsName},
		Lock:  l.StockMode == enums.LockAtOrder, GoodsLimit: l.limit,
		Buyer: o.UserID, PoolLimit: l.poolLimit,
	}
}

// ordersByNumber writes the query that finds orders' ids by number: the
// one way every path that inserted orders without RETURNING learns them.
func ordersByNumber(w store.Statement, orders []*Order) {
	w.SQL("SELECT id, order_sn FROM orders WHERE order_sn IN (")
	for j, o := range orders {
		if j > 0 {
			w.SQL(", ")
		}
		w.Str(o.OrderSn)
	}
	w.SQL(")")
}

// findOrderIDs sets the id of each of orders found by its number and says
// how many were found.
func findOrderIDs(ctx context.Context, q querier, orders []*Order) (found int, err error) {
	var s store.Bound
	ordersByNumber(&s, orders)
	bySn := make(map[string]*Order, len(orders))
	for _, o := range orders {
		bySn[o.OrderSn] = o
	}
	rs, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	for rs.Next() {
		var id int64
		var sn string
		if err := rs.Scan(&id, &sn); err != nil {
			return found, err
		}
		if o := bySn[sn]; o != nil {
			o.ID = id
			found++
		}
	}
	return found, rs.Err()
}

// sqlBool is a boolean as every dialect reads it in a statement's text.
var sqlBool = map[bool]string{true: "TRUE", false: "FALSE"}
