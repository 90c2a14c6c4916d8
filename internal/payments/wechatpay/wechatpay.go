package wechatpay

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"storefront/internal/payments"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// LiveURL is WeChat Pay's API.
const LiveURL = "https://api.mch.weixin.qq.com"

// Config is a merchant's WeChat Pay settings.
type Config struct {
	MchID  string // 商户号
	AppID  string // the AppID bound to the merchant
	Serial string // the merchant API certificate's serial number
	// PrivateKey is the merchant API key (apiclient_key.pem).
	PrivateKey *rsa.PrivateKey
	// PublicKey and PublicKeyID are WeChat Pay's public key (pub_key.pem)
	// and its id (PUB_KEY_ID_…), which answers and notifications name in
	// Wechatpay-Serial.
	PublicKey   *rsa.PublicKey
	PublicKeyID string
	APIv3Key    []byte // 32 bytes
	BaseURL     string // LiveURL unless a stand-in
	// NotifyURL is where WeChat Pay sends notifications:
	// <public URL>/payments/wechatpay/notify.
	NotifyURL string
	Client    *http.Client // nil: a client with a 10 s timeout
}

// Validate reports what is missing or wrong.
func (c Config) Validate() error {
	var missing []string
	for _, f := range [...]struct {
		name string
		ok   bool
	}{
		{"--wechatpay-mchid", c.MchID != ""}, {"--wechatpay-appid", c.AppID != ""}, {"--wechatpay-serial", c.Serial != ""},
		{"--wechatpay-private-key", c.PrivateKey != nil}, {"--wechatpay-public-key", c.PublicKey != nil},
		{"--wechatpay-public-key-id", c.PublicKeyID != ""}, {"--wechatpay-apiv3-key", len(c.APIv3Key) > 0},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("wechatpay: %s not set", strings.Join(missing, ", "))
	}
	if len(c.APIv3Key) != 32 {
		return fmt.Errorf("wechatpay: --wechatpay-apiv3-key is %d bytes, want 32", len(c.APIv3Key))
	}
	if u, err := url.Parse(c.NotifyURL); err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("wechatpay: notify URL %q: set --public-url", c.NotifyURL)
	}
	return nil
}

// Provider is WeChat Pay.
type Provider struct {
	cfg Config
	now func() time.Time
}

// New returns the provider; cfg must be valid (Validate).
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = LiveURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	return &Provider{cfg: cfg, now: time.Now}
}

func (p *Provider) Name() string     { return "wechatpay" }
func (p *Provider) Merchant() string { return p.cfg.MchID }
func (p *Provider) Currency() string { return "CNY" }

// Headers of WeChat Pay's signed answers and notifications.
const (
	HeaderTimestamp = "Wechatpay-Timestamp"
	HeaderNonce     = "Wechatpay-Nonce"
	HeaderSignature = "Wechatpay-Signature"
	HeaderSerial    = "Wechatpay-Serial"
)

// verifySigned checks a signed answer or notification: WeChat Pay's key
// id, the timestamp within tolerance, the signature over
// timestamp\nnonce\nbody\n.
func (p *Provider) verifySigned(h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if serial := h.Get(HeaderSerial); serial != p.cfg.PublicKeyID {
		return fmt.Errorf("%w: Wechatpay-Serial %q is not the configured public key id", payments.ErrBadSignature, serial)
	}
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: Wechatpay-Timestamp %q", payments.ErrMalformed, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s off", payments.ErrStale, d.Round(time.Second))
	}
	if err := Verify(p.cfg.PublicKey, ResponseMessage(ts, h.Get(HeaderNonce), string(body)), h.Get(HeaderSignature)); err != nil {
		return fmt.Errorf("%w: %v", payments.ErrBadSignature, err)
	}
	return nil
}

// notification is a notification's envelope.
type notification struct {
	ID           string `json:"id"`
	EventType    string `json:"event_type"`
	ResourceType string `json:"resource_type"`
	Resource     struct {
		Algorithm      string `json:"algorithm"`
		Ciphertext     string `json:"ciphertext"`
		AssociatedData string `json:"associated_data"`
		Nonce          string `json:"nonce"`
		OriginalType   string `json:"original_type"`
	} `json:"resource"`
}

// Transaction is a payment as notifications and queries describe it.
type Transaction struct {
	AppID         string `json:"appid"`
	MchID         string `json:"mchid"`
	OutTradeNo    string `json:"out_trade_no"`
	TransactionID string `json:"transaction_id"`
	TradeState    string `json:"trade_state"`
	Amount        struct {
		Total    int64  `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// RefundResource is a refund as its notification describes it.
type RefundResource struct {
	MchID         string `json:"mchid"`
	OutTradeNo    string `json:"out_trade_no"`
	TransactionID string `json:"transaction_id"`
	OutRefundNo   string `json:"out_refund_no"`
	RefundID      string `json:"refund_id"`
	RefundStatus  string `json:"refund_status"`
	Amount        struct {
		Total  int64 `json:"total"`
		Refund int64 `json:"refund"`
	} `json:"amount"`
}

// Verify checks a notification (key id, timestamp, signature), decrypts
// its resource and reads TRANSACTION.SUCCESS and REFUND.* events; others
// are acknowledged and ignored.
func (p *Provider) Verify(in payments.Incoming) (payments.Notice, error) {
	if err := p.verifySigned(in.Header, in.Body, in.Now, in.Tolerance); err != nil {
		return payments.Notice{}, err
	}
	var n notification
	if err := json.Unmarshal(in.Body, &n); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	}
	if n.Resource.Algorithm != "AEAD_AES_256_GCM" {
		return payments.Notice{}, fmt.Errorf("%w: resource algorithm %q", payments.ErrMalformed, n.Resource.Algorithm)
	}
	plain, err := Decrypt(p.cfg.APIv3Key, n.Resource.Nonce, n.Resource.AssociatedData, n.Resource.Ciphertext)
	if err != nil {
		return payments.Notice{}, fmt.Errorf("%w: resource does not decrypt with the APIv3 key: %v", payments.ErrMalformed, err)
	}
	switch {
	case n.EventType == "TRANSACTION.SUCCESS":
		var t Transaction
		if err := json.Unmarshal(plain, &t); err != nil {
			return payments.Notice{}, fmt.Errorf("%w: resource: %v", payments.ErrMalformed, err)
		}
		if t.AppID != p.cfg.AppID {
			return payments.Notice{}, fmt.Errorf("%w: appid %q", payments.ErrMerchant, t.AppID)
		}
		if t.TradeState != "SUCCESS" {
			return payments.Notice{Ignore: true}, nil
		}
		return payments.Notice{EventID: n.ID, PaymentID: t.TransactionID, OrderSn: t.OutTradeNo, MerchantID: t.MchID,
			Currency: t.Amount.Currency, Amount: money.Money(t.Amount.Total), Status: enums.PaymentPaid}, nil
	case strings.HasPrefix(n.EventType, "REFUND."):
		var r RefundResource
		if err := json.Unmarshal(plain, &r); err != nil {
			return payments.Notice{}, fmt.Errorf("%w: resource: %v", payments.ErrMalformed, err)
		}
		rn := &payments.RefundNotice{RefundNo: r.OutRefundNo, ProviderRefundID: r.RefundID, Amount: money.Money(r.Amount.Refund)}
		switch n.EventType {
		case "REFUND.SUCCESS":
			rn.Status = enums.RefundSucceeded
		case "REFUND.ABNORMAL", "REFUND.CLOSED":
			rn.Status, rn.Failure = enums.RefundFailed, n.EventType+" "+r.RefundStatus
		default:
			return payments.Notice{Ignore: true}, nil
		}
		return payments.Notice{EventID: n.ID, PaymentID: r.TransactionID, OrderSn: r.OutTradeNo, MerchantID: r.MchID,
			Currency: "CNY", Amount: money.Money(r.Amount.Total), Refund: rn}, nil
	}
	return payments.Notice{Ignore: true}, nil
}

// Reply: accepted is 200 with no body; refused is {"code":"FAIL","message":…}.
func (p *Provider) Reply(ok bool, message string) (string, []byte) {
	if ok {
		return "application/json", nil
	}
	b, _ := json.Marshal(map[string]string{"code": "FAIL", "message": message})
	return "application/json", b
}

// apiError is WeChat Pay's error answer.
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message) }

// do sends a signed request and reads a verified answer into out. A
// refusal (4xx but 429) is a *apiError wrapping payments.ErrRefused; no
// answer, a 429 or 5xx, or an answer that does not verify wraps
// payments.ErrProvider.
func (p *Provider) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	ts, n := p.now().Unix(), nonce()
	sig, err := Sign(p.cfg.PrivateKey, Message(method, path, ts, n, string(body)))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, p.cfg.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", Authorization(p.cfg.MchID, p.cfg.Serial, n, ts, sig))
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "storefront")
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", payments.ErrProvider, method, path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: %s %s: reading the answer: %v", payments.ErrProvider, method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Status: resp.StatusCode}
		_ = json.Unmarshal(answer, e)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return fmt.Errorf("%w: %s %s: %v", payments.ErrProvider, method, path, e)
		}
		return fmt.Errorf("%w: %w", payments.ErrRefused, e)
	}
	// An answer that is not WeChat Pay's is not believed: "a successful
	// answer without a signature is to be taken as forged".
	if err := p.verifySigned(resp.Header, answer, p.now(), 5*time.Minute); err != nil {
		return fmt.Errorf("%w: %s %s: the answer does not verify: %v", payments.ErrProvider, method, path, err)
	}
	if out != nil && len(answer) > 0 {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("%w: %s %s: %v", payments.ErrProvider, method, path, err)
		}
	}
	return nil
}

// expiry is time_expire: RFC 3339 in China Standard Time, as documented.
func expiry(t time.Time) string {
	return t.In(time.FixedZone("CST", 8*3600)).Format(time.RFC3339)
}

// Start is Native pay: POST /v3/pay/transactions/native answers the
// code_url the buyer scans.
func (p *Provider) Start(ctx context.Context, o payments.StartOrder) (payments.Started, error) {
	req := map[string]any{
		"appid": p.cfg.AppID, "mchid": p.cfg.MchID, "description": o.Subject, "out_trade_no": o.OrderSn,
		"time_expire": expiry(o.ExpiresAt), "notify_url": p.cfg.NotifyURL,
		"amount": map[string]any{"total": int64(o.Amount), "currency": o.Currency},
	}
	var out struct {
		CodeURL string `json:"code_url"`
	}
	if err := p.do(ctx, http.MethodPost, "/v3/pay/transactions/native", req, &out); err != nil {
		return payments.Started{}, err
	}
	if out.CodeURL == "" {
		return payments.Started{}, fmt.Errorf("%w: native pay answered no code_url", payments.ErrProvider)
	}
	return payments.Started{Page: map[string]string{payments.PageQRCode: out.CodeURL}}, nil
}

// Query is GET /v3/pay/transactions/out-trade-no/{out_trade_no}.
func (p *Provider) Query(ctx context.Context, s payments.StartedPayment) (payments.Queried, error) {
	var t Transaction
	err := p.do(ctx, http.MethodGet, "/v3/pay/transactions/out-trade-no/"+url.PathEscape(s.OutTradeNo)+"?mchid="+url.QueryEscape(p.cfg.MchID), nil, &t)
	var e *apiError
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return payments.Queried{Status: enums.PaymentFailed}, nil // ORDER_NOT_EXIST: never paid
	}
	if err != nil {
		return payments.Queried{}, err
	}
	switch t.TradeState {
	case "SUCCESS", "REFUND": // REFUND: paid, then refunded (its own notification)
		return payments.Queried{Status: enums.PaymentPaid, PaymentID: t.TransactionID, Amount: money.Money(t.Amount.Total), Currency: t.Amount.Currency}, nil
	case "USERPAYING", "ACCEPT":
		return payments.Queried{Status: enums.PaymentPending}, nil
	}
	return payments.Queried{Status: enums.PaymentFailed}, nil // NOTPAY, CLOSED, REVOKED, PAYERROR
}

// Refund is POST /v3/refund/domestic/refunds with out_refund_no: the same
// number again is the same refund, and answers its state.
func (p *Provider) Refund(ctx context.Context, r payments.RefundRequest) (payments.RefundResult, error) {
	req := map[string]any{
		"transaction_id": r.PaymentID, "out_refund_no": r.RefundNo, "reason": r.Reason,
		"notify_url": p.cfg.NotifyURL,
		"amount":     map[string]any{"refund": int64(r.Amount), "total": int64(r.Total), "currency": r.Currency},
	}
	var out struct {
		RefundID string `json:"refund_id"`
		Status   string `json:"status"`
	}
	if err := p.do(ctx, http.MethodPost, "/v3/refund/domestic/refunds", req, &out); err != nil {
		return payments.RefundResult{}, err
	}
	res := payments.RefundResult{ProviderRefundID: out.RefundID, Status: enums.RefundPending}
	switch out.Status {
	case "SUCCESS":
		res.Status = enums.RefundSucceeded
	case "CLOSED", "ABNORMAL":
		res.Status, res.Failure = enums.RefundFailed, "refund "+out.Status
	}
	return res, nil
}
