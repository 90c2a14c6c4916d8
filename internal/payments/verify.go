package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/input"
	"storefront/internal/vocab/money"
)

// Reasons a notification is refused, each of an errs category (which
// internal/server/notify.go answers with an HTTP status). Each is logged; the
// provider only sees "fail".
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
)

// Notification is a provider's server-to-server message.
type Notification struct {
	EventID    string `json:"eventId"`
	PaymentID  string `json:"paymentId"`
	OrderSn    string `json:"orderSn"`
	Amount     string `json:"amount"`
	Currency   string `json:"currency"`
	MerchantID string `json:"merchantId"`
	Status     string `json:"status"`
	Timestamp  int64  `json:"timestamp"`
}

// Sign returns the X-Signature header value for body.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// verifySignature compares in constant time: a timing difference would let
// an attacker guess a valid signature byte by byte.
func verifySignature(secret string, body []byte, header string) error {
	want := Sign(secret, body)
	if !hmac.Equal([]byte(want), []byte(strings.TrimSpace(header))) {
		return ErrBadSignature
	}
	return nil
}

// parse checks everything that needs no database, in the order
// after the signature: shape, timestamp, merchant.
func parse(p Provider, body []byte, now time.Time, tolerance time.Duration) (Notification, money.Money, error) {
	var n Notification
	// encoding/json would turn bytes that are not UTF-8 into U+FFFD: a
	// payment id would be stored as another string than the one sent.
	if !utf8.Valid(body) {
		return n, 0, fmt.Errorf("%w: the body is not valid UTF-8", ErrMalformed)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return n, 0, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	switch {
	case n.EventID == "" || len(n.EventID) > 64:
		return n, 0, fmt.Errorf("%w: eventId", ErrMalformed)
	case n.PaymentID == "" || len(n.PaymentID) > 64:
		return n, 0, fmt.Errorf("%w: paymentId", ErrMalformed)
	case n.OrderSn == "" || len(n.OrderSn) > 32:
		return n, 0, fmt.Errorf("%w: orderSn", ErrMalformed)
	case n.Status != "SUCCESS" && n.Status != "REFUNDED" && n.Status != "FAILED":
		return n, 0, fmt.Errorf("%w: status %q", ErrMalformed, n.Status)
	}
	// The input rule of every string that enters (package input): a NUL
	// in an id fails PostgreSQL's statement, where SQLite would store it.
	for _, f := range [...]struct{ name, v string }{{"eventId", n.EventID}, {"paymentId", n.PaymentID}, {"orderSn", n.OrderSn}, {"merchantId", n.MerchantID}} {
		if why := input.Check(f.v, input.Default); why != "" {
			return n, 0, fmt.Errorf("%w: %s %s", ErrMalformed, f.name, why)
		}
	}
	amount, err := money.Parse(n.Amount)
	if err != nil {
		return n, 0, fmt.Errorf("%w: amount: %v", ErrMalformed, err)
	}
	if d := now.Sub(time.Unix(n.Timestamp, 0)); d > tolerance || d < -tolerance {
		return n, 0, fmt.Errorf("%w: %s off", ErrStale, d.Round(time.Second))
	}
	if n.MerchantID != p.MerchantID {
		return n, 0, fmt.Errorf("%w: %q", ErrMerchant, n.MerchantID)
	}
	return n, amount, nil
}
