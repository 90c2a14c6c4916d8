package payments

import (
	"context"
	"net/http"
	"time"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Provider is one payment provider's protocol: how a payment starts, how a
// notification is verified and read, how a payment is queried and how a
// refund is sent. Each provider is a package under internal/payments
// (mock, wechatpay, alipay, stripe), like a database dialect; what follows
// from what a provider says (one payment per (provider, payment id), one
// event per (provider, event id), the merchant, currency and amount checks,
// never downgrading PAID, refunding once) is this package's, the same for
// all. A provider converts its amounts (fen, yuan strings, minor units) to
// money.Money exactly and reads no database.
type Provider interface {
	// Name is the provider's name in routes, rows and GraphQL.
	Name() string
	// Merchant is the merchant id every notification must name ("" when
	// the protocol names none).
	Merchant() string
	// Currency is the ISO 4217 code of the payments this provider takes.
	Currency() string
	// Verify checks a notification as the provider signs it (signature,
	// key id, timestamp) and reads it: a payment's new state or, with
	// Notice.Refund set, a refund's outcome. It writes nothing.
	Verify(in Incoming) (Notice, error)
	// Reply is the body the provider expects in answer to a notification:
	// accepted (ok) or refused with message.
	Reply(ok bool, message string) (contentType string, body []byte)
	// Start begins paying an order at the provider.
	Start(ctx context.Context, o StartOrder) (Started, error)
	// Query asks the provider what became of an order's payment.
	Query(ctx context.Context, s StartedPayment) (Queried, error)
	// Refund sends a refund (again: the same RefundNo is the same refund).
	Refund(ctx context.Context, r RefundRequest) (RefundResult, error)
}

// Canceler is a Provider whose payments do not expire by themselves (a
// Stripe PaymentIntent): an order's expiry is enforced by cancelling its
// payment when the order closes unpaid.
type Canceler interface {
	Cancel(ctx context.Context, s StartedPayment) error
}

// Incoming is a notification as it arrived.
type Incoming struct {
	Header http.Header
	Body   []byte
	Now    time.Time
	// Tolerance bounds how far a signed timestamp may be from Now, either
	// way: a captured notification cannot be replayed later.
	Tolerance time.Duration
}

// Notice is what a verified notification says.
type Notice struct {
	EventID    string // the provider's notification or event id (dedupe)
	PaymentID  string // the provider's payment id (transaction_id, trade_no, PaymentIntent id)
	OrderSn    string // our order number ("" when the provider does not repeat it: refunds)
	MerchantID string
	Currency   string
	Amount     money.Money // the payment's whole amount
	// Status is the payment's state the notification reports (PAID,
	// FAILED, REFUNDED); empty with Refund set.
	Status enums.PaymentStatus
	Refund *RefundNotice
	// Ignore: a genuine notification of something this shop does not act
	// on (another event type); it is acknowledged and nothing is written.
	Ignore bool
}

// RefundNotice is a refund's outcome as a notification reports it.
type RefundNotice struct {
	RefundNo         string // our refund number; "" for a refund made outside this shop
	ProviderRefundID string
	Status           enums.RefundStatus // SUCCEEDED or FAILED
	Amount           money.Money        // the amount refunded
	Failure          string             // why, when FAILED
}

// StartOrder is what a provider needs to start paying an order.
type StartOrder struct {
	OrderSn   string
	Amount    money.Money
	Currency  string
	Subject   string    // a line the buyer sees
	ExpiresAt time.Time // the order's expiry: the payment's too
}

// Started is a started payment as the buyer's page needs it; the GraphQL
// type PaymentStart binds to it (startpage.go).
type Started struct {
	Provider   string
	OutTradeNo string
	ExpiresAt  time.Time
	// Page is what the provider gives the buyer's page to pay with, by
	// the PaymentStart field that carries it (PageQRCode, …): each
	// provider fills in its own.
	Page map[string]string `json:"-"`
	// Ref is the provider's object id (a PaymentIntent), kept for Query.
	Ref string `json:"-"`
}

// StartedPayment names a started payment for Query and Cancel.
type StartedPayment struct {
	OrderSn    string
	OutTradeNo string
	Ref        string // Started.Ref, "" when the start's answer was lost
	Amount     money.Money
	Currency   string
	ExpiresAt  time.Time
}

// Queried is what a provider says of a started payment.
type Queried struct {
	// Status: PAID (then PaymentID, Amount and Currency are set), PENDING
	// (the buyer may still be paying: not closed yet), or FAILED (never
	// paid, and can no longer be).
	Status    enums.PaymentStatus
	PaymentID string
	Amount    money.Money
	Currency  string
}

// RefundRequest is one send of a refund.
type RefundRequest struct {
	RefundNo  string
	OrderSn   string
	PaymentID string      // the provider's payment id
	Total     money.Money // the payment's amount
	Amount    money.Money // the amount refunded
	Currency  string
	Reason    string
}

// RefundResult is the provider's answer to a send: PENDING (it will
// confirm later), SUCCEEDED or FAILED (refused, with Failure).
type RefundResult struct {
	Status           enums.RefundStatus
	ProviderRefundID string
	Failure          string
}

// ErrProvider is a provider that could not be reached or did not answer
// as documented: the call may be made again (with the same numbers).
var ErrProvider = errs.New(errs.Unavailable, "payment provider unavailable")

// ErrRefused is a provider's refusal of a request (a refund it will not
// make, a payment it will not start).
var ErrRefused = errs.New(errs.InvalidInput, "refused by the payment provider")
