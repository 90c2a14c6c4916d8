package payments

import (
	"fmt"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/input"
)

// Reasons a notification is refused, each of an errs category (which
// internal/server/notify.go answers with an HTTP status). Each is logged; the
// provider only sees its protocol's "fail". Providers wrap them with their
// own detail.
var (
	ErrUnknownProvider = errs.New(errs.NotFound, "unknown payment provider")
	ErrBadSignature    = errs.New(errs.Unauthenticated, "bad signature")
	ErrMalformed       = errs.New(errs.InvalidInput, "malformed notification")
	ErrStale           = errs.New(errs.InvalidInput, "notification timestamp outside the tolerance")
	ErrMerchant        = errs.New(errs.InvalidInput, "merchant id does not match the provider")
	ErrOrderNotFound   = errs.New(errs.NotFound, "order not found")
	ErrCurrency        = errs.New(errs.InvalidInput, "currency does not match the order")
	ErrAmount          = errs.New(errs.InvalidInput, "amount does not match the order")
	// ErrOtherOrder: the (provider, payment id) is bound to another order,
	// by whichever redirect or notification named it first.
	ErrOtherOrder = errs.New(errs.Conflict, "payment id belongs to another order")
	// ErrUnknownRefund: a refund notification naming a refund number this
	// shop never sent.
	ErrUnknownRefund = errs.New(errs.NotFound, "unknown refund")
)

// checkNotice applies, to what every provider reads, the limits of the
// columns it is stored in and the input rule of every string that enters
// (package input): a NUL in an id fails PostgreSQL's statement, where
// SQLite would store it.
func checkNotice(n Notice) error {
	for _, f := range [...]struct {
		name, v string
		max     int
		need    bool
	}{
		{"event id", n.EventID, 64, true},
		{"payment id", n.PaymentID, 64, n.Refund == nil || n.Refund.RefundNo == ""},
		{"order number", n.OrderSn, 32, n.Refund == nil},
		{"merchant id", n.MerchantID, 64, false},
	} {
		if (f.need && f.v == "") || len(f.v) > f.max {
			return fmt.Errorf("%w: %s %q", ErrMalformed, f.name, f.v)
		}
		if why := input.Check(f.v, input.Default); why != "" {
			return fmt.Errorf("%w: %s %s", ErrMalformed, f.name, why)
		}
	}
	if n.Refund != nil {
		if why := input.Check(n.Refund.RefundNo, input.Default); why != "" || len(n.Refund.RefundNo) > 64 {
			return fmt.Errorf("%w: refund number %q", ErrMalformed, n.Refund.RefundNo)
		}
		return nil
	}
	switch n.Status {
	case enums.PaymentPaid, enums.PaymentFailed, enums.PaymentRefunded:
		return nil
	}
	return fmt.Errorf("%w: status %q", ErrMalformed, n.Status)
}
