// Package mock is the demo's payment provider: a notification is our own
// JSON signed with an HMAC (X-Signature: sha256=<hex>), so a payment can be
// completed by hand (`storefront notify`) and tests need no keys. It has no
// API to call: Start returns nothing to show, Query knows nothing, and a
// refund is confirmed at once.
package mock

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"storefront/internal/payments"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Provider is a mock provider.
type Provider struct {
	name, secret, merchant, currency string
}

// New returns a mock provider called name.
func New(name, secret, merchant, currency string) *Provider {
	return &Provider{name: name, secret: secret, merchant: merchant, currency: currency}
}

// Demo is the demo's provider: "mock", merchant mock-merchant, CNY.
func Demo(secret string) *Provider {
	if secret == "" {
		secret = "mock-secret"
	}
	return New("mock", secret, "mock-merchant", "CNY")
}

// ParseProviders reads STOREFRONT_PAYMENT_PROVIDERS: "name:secret:merchant:currency[,…]".
func ParseProviders(s string) ([]payments.Provider, error) {
	var out []payments.Provider
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" || len(f[3]) != 3 {
			return nil, fmt.Errorf("payment provider %q: want name:secret:merchant:currency", part)
		}
		out = append(out, New(f[0], f[1], f[2], strings.ToUpper(f[3])))
	}
	return out, nil
}

func (p *Provider) Name() string     { return p.name }
func (p *Provider) Merchant() string { return p.merchant }
func (p *Provider) Currency() string { return p.currency }

// Notification is the mock's notification body.
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

// Header is the header a notification signed with sig carries.
func Header(sig string) http.Header { return http.Header{"X-Signature": {sig}} }

var statuses = map[string]enums.PaymentStatus{"SUCCESS": enums.PaymentPaid, "FAILED": enums.PaymentFailed, "REFUNDED": enums.PaymentRefunded}

// Verify checks the HMAC (in constant time: a timing difference would let
// an attacker guess a valid signature byte by byte), then the shape and the
// timestamp.
func (p *Provider) Verify(in payments.Incoming) (payments.Notice, error) {
	want := Sign(p.secret, in.Body)
	if !hmac.Equal([]byte(want), []byte(strings.TrimSpace(in.Header.Get("X-Signature")))) {
		return payments.Notice{}, payments.ErrBadSignature
	}
	var n Notification
	// encoding/json would turn bytes that are not UTF-8 into U+FFFD: a
	// payment id would be stored as another string than the one sent.
	if !utf8.Valid(in.Body) {
		return payments.Notice{}, fmt.Errorf("%w: the body is not valid UTF-8", payments.ErrMalformed)
	}
	dec := json.NewDecoder(strings.NewReader(string(in.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	}
	status, ok := statuses[n.Status]
	if !ok {
		return payments.Notice{}, fmt.Errorf("%w: status %q", payments.ErrMalformed, n.Status)
	}
	amount, err := money.Parse(n.Amount)
	if err != nil {
		return payments.Notice{}, fmt.Errorf("%w: amount: %v", payments.ErrMalformed, err)
	}
	if d := in.Now.Sub(time.Unix(n.Timestamp, 0)); d > in.Tolerance || d < -in.Tolerance {
		return payments.Notice{}, fmt.Errorf("%w: %s off", payments.ErrStale, d.Round(time.Second))
	}
	return payments.Notice{EventID: n.EventID, PaymentID: n.PaymentID, OrderSn: n.OrderSn, MerchantID: n.MerchantID,
		Currency: n.Currency, Amount: amount, Status: status}, nil
}

// Reply is "success" or "fail".
func (p *Provider) Reply(ok bool, _ string) (string, []byte) {
	if ok {
		return "text/plain; charset=utf-8", []byte("success")
	}
	return "text/plain; charset=utf-8", []byte("fail")
}

// Start has nothing for the buyer's page: the demo pays with `storefront notify`.
func (p *Provider) Start(context.Context, payments.StartOrder) (payments.Started, error) {
	return payments.Started{}, nil
}

// Query knows nothing: the closer closes the order as before.
func (p *Provider) Query(context.Context, payments.StartedPayment) (payments.Queried, error) {
	return payments.Queried{Status: enums.PaymentFailed}, nil
}

// Refund is confirmed at once.
func (p *Provider) Refund(_ context.Context, r payments.RefundRequest) (payments.RefundResult, error) {
	return payments.RefundResult{Status: enums.RefundSucceeded, ProviderRefundID: "mock-" + r.RefundNo}, nil
}
