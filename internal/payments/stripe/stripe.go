// Package stripe is Stripe: webhooks verified with stripe-go's
// webhook.ConstructEvent (Stripe-Signature, the endpoint's signing secret,
// a 5-minute tolerance), payments as PaymentIntents (client_secret for
// Stripe.js) and refunds as Refunds, both created through stripe-go with an
// Idempotency-Key. Amounts are the currency's minor units.
package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"storefront/internal/payments"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// LiveURL is Stripe's API.
const LiveURL = "https://api.stripe.com"

// Config is a Stripe account's settings.
type Config struct {
	SecretKey     string // sk_live_… (or a restricted key allowed PaymentIntents and Refunds)
	WebhookSecret string // the webhook endpoint's signing secret, whsec_…
	BaseURL       string // LiveURL unless a stand-in
	Currency      string // the shop's currency (orders are in it)
	Client        *http.Client
}

// Currencies whose minor unit is not a hundredth: money.Money counts
// hundredths, so a shop in one of them cannot take Stripe payments here
// without a conversion this package does not make.
var notHundredths = []string{"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
	"XAF", "XOF", "XPF", "BHD", "JOD", "KWD", "OMR", "TND", "ISK", "HUF", "TWD", "UGX"}

// Validate reports what is missing or wrong.
func (c Config) Validate() error {
	var missing []string
	if c.SecretKey == "" {
		missing = append(missing, "--stripe-secret-key")
	}
	if c.WebhookSecret == "" {
		missing = append(missing, "--stripe-webhook-secret")
	}
	if len(missing) > 0 {
		return fmt.Errorf("stripe: %s not set", strings.Join(missing, ", "))
	}
	if slices.Contains(notHundredths, strings.ToUpper(c.Currency)) {
		return fmt.Errorf("stripe: currency %s: its minor unit is not a hundredth", c.Currency)
	}
	return nil
}

// Provider is Stripe.
type Provider struct {
	cfg Config
	sc  *stripego.Client
}

// New returns the provider; cfg must be valid (Validate).
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = LiveURL
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	cfg.Currency = strings.ToUpper(cfg.Currency)
	base := strings.TrimRight(cfg.BaseURL, "/")
	// No retries inside stripe-go: a refund whose answer was lost is sent
	// again by payments' sweeper, with the same Idempotency-Key.
	backends := stripego.NewBackendsWithConfig(&stripego.BackendConfig{URL: &base, HTTPClient: cfg.Client,
		MaxNetworkRetries: stripego.Int64(0), LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull}})
	return &Provider{cfg: cfg, sc: stripego.NewClient(cfg.SecretKey, stripego.WithBackends(backends))}
}

func (p *Provider) Name() string     { return "stripe" }
func (p *Provider) Merchant() string { return "" } // an event of a connected account names it (account)
func (p *Provider) Currency() string { return p.cfg.Currency }

// Routes: Stripe's webhook endpoint is registered in its dashboard under
// this path.
func (p *Provider) Routes() []string { return []string{"/payments/stripe/webhook"} }

// event is the part of a Stripe event this shop reads.
type event struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Account string `json:"account"`
	Data    struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// object is the fields of a PaymentIntent, a Charge or a Refund read here.
type object struct {
	ID             string            `json:"id"`
	Amount         int64             `json:"amount"`
	AmountRefunded int64             `json:"amount_refunded"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	Metadata       map[string]string `json:"metadata"`
	PaymentIntent  string            `json:"payment_intent"`
	FailureReason  string            `json:"failure_reason"`
}

// Verify checks Stripe-Signature with the endpoint's secret
// (webhook.ConstructEventWithOptions, within the tolerance) and reads
// payment_intent.succeeded (metadata.orderSn names the order),
// charge.refunded and refund.updated/refund.failed/charge.refund.updated
// (the Refund's status, the last word: succeeded after failed is a
// success); other events are
// acknowledged and ignored.
func (p *Provider) Verify(in payments.Incoming) (payments.Notice, error) {
	// The event's API version is not required to be stripe-go's: only the
	// few fields above are read, the same in every version.
	_, err := webhook.ConstructEventWithOptions(in.Body, in.Header.Get("Stripe-Signature"), p.cfg.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: in.Tolerance, IgnoreAPIVersionMismatch: true})
	switch {
	case errors.Is(err, webhook.ErrTooOld):
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrStale, err)
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrNoValidSignature):
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrBadSignature, err)
	case err != nil:
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	}
	// stripe-go refuses only a timestamp too old; the tolerance is both
	// ways, so a signature made for later cannot be kept and played then.
	if t, err := signedAt(in.Header.Get("Stripe-Signature")); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	} else if d := t.Sub(in.Now); d > in.Tolerance {
		return payments.Notice{}, fmt.Errorf("%w: signed %s ahead", payments.ErrStale, d.Round(time.Second))
	}
	var e event
	var o object
	if err := json.Unmarshal(in.Body, &e); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	}
	if err := json.Unmarshal(e.Data.Object, &o); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: data.object: %v", payments.ErrMalformed, err)
	}
	n := payments.Notice{EventID: e.ID, MerchantID: e.Account, Currency: strings.ToUpper(o.Currency)}
	switch e.Type {
	case "payment_intent.succeeded":
		n.PaymentID, n.OrderSn, n.Amount, n.Status = o.ID, o.Metadata["orderSn"], money.Money(o.Amount), enums.PaymentPaid
	case "charge.refunded":
		n.PaymentID, n.Amount = o.PaymentIntent, money.Money(o.Amount)
		n.Refund = &payments.RefundNotice{Status: enums.RefundSucceeded, Amount: money.Money(o.AmountRefunded)}
	case "refund.updated", "refund.failed", "charge.refund.updated":
		rn := &payments.RefundNotice{RefundNo: o.Metadata["refundNo"], ProviderRefundID: o.ID, Amount: money.Money(o.Amount)}
		switch o.Status {
		case "succeeded":
			rn.Status = enums.RefundSucceeded
		case "failed", "canceled":
			rn.Status, rn.Failure = enums.RefundFailed, o.Status+" "+o.FailureReason
		default:
			return payments.Notice{Ignore: true}, nil
		}
		n.PaymentID, n.Refund = o.PaymentIntent, rn
	default:
		return payments.Notice{Ignore: true}, nil
	}
	return n, nil
}

// signedAt is the t= of a Stripe-Signature header (which
// webhook.ConstructEventWithOptions has verified).
func signedAt(header string) (time.Time, error) {
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			sec, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("Stripe-Signature t=%q", v)
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, errors.New("Stripe-Signature has no t=")
}

// Reply: Stripe reads only the status (2xx: delivered).
func (p *Provider) Reply(ok bool, message string) (string, []byte) {
	b, _ := json.Marshal(map[string]any{"received": ok, "message": message})
	return "application/json", b
}

// wrap turns stripe-go's error into payments': Stripe's refusal (4xx but
// 429) is payments.ErrRefused; anything else payments.ErrProvider.
func wrap(op string, err error) error {
	var se *stripego.Error
	if errors.As(err, &se) && se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 && se.HTTPStatusCode != http.StatusTooManyRequests {
		return fmt.Errorf("%w: %s: %s %s", payments.ErrRefused, op, se.Code, se.Msg)
	}
	return fmt.Errorf("%w: %s: %v", payments.ErrProvider, op, err)
}

// create makes the order's PaymentIntent, or with the same Idempotency-Key
// answers the one made before. Its parameters are the order's alone, the
// same at every call: Stripe refuses a key sent again with others.
func (p *Provider) create(ctx context.Context, orderSn string, amount money.Money, currency string) (*stripego.PaymentIntent, error) {
	params := &stripego.PaymentIntentCreateParams{
		Amount: stripego.Int64(int64(amount)), Currency: stripego.String(strings.ToLower(currency)),
		Description:             stripego.String("Order " + orderSn),
		AutomaticPaymentMethods: &stripego.PaymentIntentCreateAutomaticPaymentMethodsParams{Enabled: stripego.Bool(true)},
	}
	params.AddMetadata("orderSn", orderSn)
	params.SetIdempotencyKey("pi-" + orderSn)
	pi, err := p.sc.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return nil, wrap("creating the PaymentIntent", err)
	}
	return pi, nil
}

// Start creates the order's PaymentIntent; Stripe.js confirms it with its
// client_secret. A PaymentIntent has no expiry of its own: the order's is
// kept by cancelling it when the order closes unpaid (Cancel).
func (p *Provider) Start(ctx context.Context, o payments.StartOrder) (payments.Started, error) {
	pi, err := p.create(ctx, o.OrderSn, o.Amount, o.Currency)
	if err != nil {
		return payments.Started{}, err
	}
	return payments.Started{Page: map[string]string{payments.PageClientSecret: pi.ClientSecret}, Ref: pi.ID}, nil
}

// intent is the started payment's PaymentIntent.
func (p *Provider) intent(ctx context.Context, s payments.StartedPayment) (*stripego.PaymentIntent, error) {
	id := s.Ref
	if id == "" {
		// The start's answer was lost: the same key answers the same
		// PaymentIntent, as it was then; its state now is read below.
		pi, err := p.create(ctx, s.OrderSn, s.Amount, s.Currency)
		if err != nil {
			return nil, err
		}
		id = pi.ID
	}
	pi, err := p.sc.V1PaymentIntents.Retrieve(ctx, id, nil)
	if err != nil {
		return nil, wrap("reading the PaymentIntent", err)
	}
	return pi, nil
}

// Query reads the PaymentIntent.
func (p *Provider) Query(ctx context.Context, s payments.StartedPayment) (payments.Queried, error) {
	pi, err := p.intent(ctx, s)
	if err != nil {
		return payments.Queried{}, err
	}
	switch pi.Status {
	case stripego.PaymentIntentStatusSucceeded:
		return payments.Queried{Status: enums.PaymentPaid, PaymentID: pi.ID, Amount: money.Money(pi.Amount), Currency: strings.ToUpper(string(pi.Currency))}, nil
	case stripego.PaymentIntentStatusProcessing, stripego.PaymentIntentStatusRequiresAction, stripego.PaymentIntentStatusRequiresCapture:
		return payments.Queried{Status: enums.PaymentPending}, nil
	}
	return payments.Queried{Status: enums.PaymentFailed}, nil
}

// Cancel cancels the PaymentIntent, so the buyer cannot pay a closed order.
func (p *Provider) Cancel(ctx context.Context, s payments.StartedPayment) error {
	pi, err := p.intent(ctx, s)
	if err != nil {
		return err
	}
	if pi.Status == stripego.PaymentIntentStatusCanceled {
		return nil
	}
	if _, err := p.sc.V1PaymentIntents.Cancel(ctx, pi.ID, nil); err != nil {
		return wrap("cancelling the PaymentIntent", err)
	}
	return nil
}

// Refund creates a Refund of the PaymentIntent with the refund number as
// its Idempotency-Key (and in its metadata, which refund.updated carries).
func (p *Provider) Refund(ctx context.Context, r payments.RefundRequest) (payments.RefundResult, error) {
	params := &stripego.RefundCreateParams{PaymentIntent: stripego.String(r.PaymentID), Amount: stripego.Int64(int64(r.Amount)),
		Reason: stripego.String("requested_by_customer")}
	params.AddMetadata("refundNo", r.RefundNo)
	params.AddMetadata("orderSn", r.OrderSn)
	params.SetIdempotencyKey(r.RefundNo)
	ref, err := p.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return payments.RefundResult{}, wrap("creating the Refund", err)
	}
	res := payments.RefundResult{ProviderRefundID: ref.ID, Status: enums.RefundPending}
	switch ref.Status {
	case stripego.RefundStatusSucceeded:
		res.Status = enums.RefundSucceeded
	case stripego.RefundStatusFailed, stripego.RefundStatusCanceled:
		res.Status, res.Failure = enums.RefundFailed, string(ref.Status)+" "+string(ref.FailureReason)
	}
	return res, nil
}
