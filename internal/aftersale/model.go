package aftersale

import (
	"time"

	"storefront/ent"
	"storefront/internal/checkout"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// AfterSale is an after-sale as clients see it; the GraphQL type AfterSale
// binds to it (its id is Sn).
type AfterSale struct {
	Sn               string
	OrderSn          string
	UserID           string
	Type             enums.AfterSaleType
	Status           enums.AfterSaleStatus
	Lines            []*Line
	Amount           money.Money
	ShippingFee      money.Money
	Currency         string
	Reason           string
	RejectReason     string
	ReturnCarrier    string
	ReturnTrackingNo string
	CreatedAt        time.Time
	UpdatedAt        time.Time

	id, orderID int64
	whole       bool // refundOrder's: only units that had not shipped
}

// Line is the units of one order line an after-sale covers.
type Line struct {
	ItemID   int64
	Quantity int64
	Amount   money.Money

	orderLineID, goodsID, poolID, withheld int64
}

func toAfterSale(r *ent.AfterSale) *AfterSale {
	a := &AfterSale{Sn: r.AfterSaleSn, OrderSn: r.OrderSn, UserID: r.UserID, Type: r.Type, Status: r.Status,
		Amount: r.Amount, ShippingFee: r.ShippingFee, Currency: r.Currency, Reason: r.Reason, RejectReason: r.RejectReason,
		ReturnCarrier: r.ReturnCarrier, ReturnTrackingNo: r.ReturnTrackingNo, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		id: r.ID, orderID: r.OrderID, whole: r.Whole}
	for _, l := range r.Edges.Lines {
		a.Lines = append(a.Lines, &Line{ItemID: l.ItemID, Quantity: l.Quantity, Amount: l.Amount,
			orderLineID: l.OrderLineID, goodsID: l.GoodsID, poolID: l.PoolID, withheld: l.Withheld})
	}
	return a
}

// The after-sales' errors; resolvers/errors.go maps their categories and
// checkout's to codes (API-CONVENTIONS.md has no code of its own for an
// after-sale's state: a transition its state refuses is the order
// vocabulary's INVALID_ORDER_STATE).
var (
	ErrNotFound     = errs.NotFound
	ErrInvalidInput = errs.InvalidInput
	ErrInvalidState = checkout.ErrInvalidOrderState
	ErrQuantity     = checkout.ErrInvalidQuantity
)

// The after-sales' events, through the outbox about the order (subject: the
// order's number), as the order's own are.
const (
	EventAfterSaleRequested = "AfterSaleRequested"
	EventAfterSaleRefunded  = "AfterSaleRefunded"
)

// EventTypes are the after-sales' event types, which webhooks may
// subscribe to (internal/app adds them to checkout's).
var EventTypes = []string{EventAfterSaleRequested, EventAfterSaleRefunded}

type eventLine struct {
	ItemID   int64  `json:"itemId,string"`
	Quantity int64  `json:"quantity"`
	Amount   string `json:"amount"`
}

type eventPayload struct {
	AfterSaleSn string      `json:"afterSaleSn"`
	OrderSn     string      `json:"orderSn"`
	UserID      string      `json:"userId"`
	Type        string      `json:"type"`
	Status      string      `json:"status"`
	Amount      string      `json:"amount"`
	Lines       []eventLine `json:"lines"`
}

func payloadOf(a *AfterSale) eventPayload {
	p := eventPayload{AfterSaleSn: a.Sn, OrderSn: a.OrderSn, UserID: a.UserID, Type: string(a.Type), Status: string(a.Status), Amount: a.Amount.String()}
	for _, l := range a.Lines {
		p.Lines = append(p.Lines, eventLine{ItemID: l.ItemID, Quantity: l.Quantity, Amount: l.Amount.String()})
	}
	return p
}

// withheldAny reports whether a holds units that had not shipped.
func (a *AfterSale) withheldAny() bool {
	for _, l := range a.Lines {
		if l.withheld > 0 {
			return true
		}
	}
	return false
}
