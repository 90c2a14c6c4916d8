package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"storefront/money"
)

// Reasons a notification is refused. Each is logged; the provider only sees "fail".
var (
	ErrUnknownProvider = errors.New("unknown payment provider")
	ErrBadSignature    = errors.New("bad signature")
	ErrMalformed       = errors.New("malformed notification")
	ErrStale           = errors.New("notification timestamp outside the tolerance")
	ErrMerchant        = errors.New("merchant id does not match the provider")
	ErrOrderNotFound   = errors.New("order not found")
	ErrCurrency        = errors.New("currency does not match the order")
	ErrAmount          = errors.New("amount does not match the order")
	// ErrOtherOrder: the (provider, payment id) is bound to another order,
	// by whichever redirect or notification named it first.
	ErrOtherOrder = errors.New("payment id belongs to another order")
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
