package alipay

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"storefront/internal/payments"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// LiveGateway is Alipay's gateway.
const LiveGateway = "https://openapi.alipay.com/gateway.do"

// Config is an Alipay app's settings.
type Config struct {
	AppID      string
	PrivateKey *rsa.PrivateKey // the app's key
	PublicKey  *rsa.PublicKey  // Alipay's public key
	Gateway    string          // LiveGateway unless a stand-in
	// NotifyURL is where Alipay sends notifications:
	// <public URL>/payments/alipay/notify ("": the app's default).
	NotifyURL string
	// ReturnURL is where the buyer is sent back after paying ("": none).
	ReturnURL string
	Client    *http.Client // nil: a client with a 10 s timeout
}

// Validate reports what is missing.
func (c Config) Validate() error {
	var missing []string
	if c.AppID == "" {
		missing = append(missing, "--alipay-app-id")
	}
	if c.PrivateKey == nil {
		missing = append(missing, "--alipay-private-key")
	}
	if c.PublicKey == nil {
		missing = append(missing, "--alipay-public-key")
	}
	if len(missing) > 0 {
		return fmt.Errorf("alipay: %s not set", strings.Join(missing, ", "))
	}
	return nil
}

// Provider is Alipay.
type Provider struct {
	cfg Config
	now func() time.Time
}

// New returns the provider; cfg must be valid (Validate).
func New(cfg Config) *Provider {
	if cfg.Gateway == "" {
		cfg.Gateway = LiveGateway
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	return &Provider{cfg: cfg, now: time.Now}
}

func (p *Provider) Name() string     { return "alipay" }
func (p *Provider) Merchant() string { return p.cfg.AppID }
func (p *Provider) Currency() string { return "CNY" }

// beijing is the time zone of Alipay's timestamps.
var beijing = time.FixedZone("CST", 8*3600)

const timeLayout = "2006-01-02 15:04:05"

// params are a request's signed parameters: the common ones, biz_content,
// and sign.
func (p *Provider) params(method string, biz map[string]any) (url.Values, error) {
	content, err := json.Marshal(biz)
	if err != nil {
		return nil, err
	}
	v := url.Values{
		"app_id": {p.cfg.AppID}, "method": {method}, "format": {"JSON"}, "charset": {"utf-8"},
		"sign_type": {"RSA2"}, "timestamp": {p.now().In(beijing).Format(timeLayout)}, "version": {"1.0"},
		"biz_content": {string(content)},
	}
	if p.cfg.NotifyURL != "" {
		v.Set("notify_url", p.cfg.NotifyURL)
	}
	if method == "alipay.trade.page.pay" && p.cfg.ReturnURL != "" {
		v.Set("return_url", p.cfg.ReturnURL)
	}
	sig, err := Sign(p.cfg.PrivateKey, SignContent(v, "sign"))
	if err != nil {
		return nil, err
	}
	v.Set("sign", sig)
	return v, nil
}

// Verify checks an asynchronous notification (form-encoded, RSA2 over
// every parameter but sign and sign_type) and reads it. Alipay sends one
// again, with the same notify_id, until it is answered "success", for up
// to 25 hours: its time is not checked, a repeat is a duplicate.
func (p *Provider) Verify(in payments.Incoming) (payments.Notice, error) {
	v, err := url.ParseQuery(string(in.Body))
	if err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrMalformed, err)
	}
	if st := v.Get("sign_type"); st != "RSA2" {
		return payments.Notice{}, fmt.Errorf("%w: sign_type %q", payments.ErrBadSignature, st)
	}
	if err := Verify(p.cfg.PublicKey, SignContent(v, "sign", "sign_type"), v.Get("sign")); err != nil {
		return payments.Notice{}, fmt.Errorf("%w: %v", payments.ErrBadSignature, err)
	}
	total, err := money.Parse(v.Get("total_amount"))
	if err != nil {
		return payments.Notice{}, fmt.Errorf("%w: total_amount: %v", payments.ErrMalformed, err)
	}
	currency := "CNY"
	if c := v.Get("trans_currency"); c != "" {
		currency = c
	}
	n := payments.Notice{EventID: v.Get("notify_id"), PaymentID: v.Get("trade_no"), OrderSn: v.Get("out_trade_no"),
		MerchantID: v.Get("app_id"), Currency: currency, Amount: total}
	refunded := money.Money(0)
	if f := v.Get("refund_fee"); f != "" {
		if refunded, err = money.Parse(f); err != nil {
			return payments.Notice{}, fmt.Errorf("%w: refund_fee: %v", payments.ErrMalformed, err)
		}
	}
	switch status := v.Get("trade_status"); {
	case refunded > 0 && (status == "TRADE_SUCCESS" || status == "TRADE_CLOSED"):
		// A refund: a part (the trade stays TRADE_SUCCESS) or the whole
		// (TRADE_CLOSED). out_biz_no is the refund's out_request_no.
		n.Refund = &payments.RefundNotice{RefundNo: v.Get("out_biz_no"), Status: enums.RefundSucceeded, Amount: refunded}
	case status == "TRADE_SUCCESS", status == "TRADE_FINISHED":
		n.Status = enums.PaymentPaid
	case status == "TRADE_CLOSED":
		n.Status = enums.PaymentFailed
	default: // WAIT_BUYER_PAY
		return payments.Notice{Ignore: true}, nil
	}
	return n, nil
}

// Reply is the body Alipay waits for: "success"; anything else makes it
// send the notification again.
func (p *Provider) Reply(ok bool, _ string) (string, []byte) {
	if ok {
		return "text/plain; charset=utf-8", []byte("success")
	}
	return "text/plain; charset=utf-8", []byte("fail")
}

// Start is page pay: a signed gateway URL built here, to which the buyer's
// browser is sent. time_expire is the order's expiry.
func (p *Provider) Start(_ context.Context, o payments.StartOrder) (payments.Started, error) {
	v, err := p.params("alipay.trade.page.pay", map[string]any{
		"out_trade_no": o.OrderSn, "product_code": "FAST_INSTANT_TRADE_PAY", "total_amount": o.Amount.String(),
		"subject": o.Subject, "time_expire": o.ExpiresAt.In(beijing).Format(timeLayout),
	})
	if err != nil {
		return payments.Started{}, err
	}
	u := p.cfg.Gateway + "?" + v.Encode()
	return payments.Started{Page: map[string]string{payments.PageRedirectURL: u}}, nil
}

// answer is the common part of an API answer.
type answer struct {
	Code    string `json:"code"`
	Msg     string `json:"msg"`
	SubCode string `json:"sub_code"`
	SubMsg  string `json:"sub_msg"`
}

func (a answer) Error() string {
	return fmt.Sprintf("%s %s: %s %s", a.Code, a.Msg, a.SubCode, a.SubMsg)
}

// call POSTs a signed request to the gateway and reads its verified answer
// (the raw <method>_response object, signed as it is) into out. Code 10000
// is success; a business refusal (40004, a bad parameter 40002) wraps
// payments.ErrRefused; no answer, 20000 (service unavailable) or an answer
// that does not verify wraps payments.ErrProvider.
func (p *Provider) call(ctx context.Context, method string, biz map[string]any, out any) (answer, error) {
	v, err := p.params(method, biz)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.Gateway, bytes.NewReader([]byte(v.Encode())))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%w: %s: %v", payments.ErrProvider, method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return answer{}, fmt.Errorf("%w: %s: HTTP %d %v", payments.ErrProvider, method, resp.StatusCode, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return answer{}, fmt.Errorf("%w: %s: %v", payments.ErrProvider, method, err)
	}
	key := strings.ReplaceAll(method, ".", "_") + "_response"
	content, ok := raw[key]
	if !ok {
		content, ok = raw["error_response"]
	}
	var sig string
	_ = json.Unmarshal(raw["sign"], &sig)
	if !ok || Verify(p.cfg.PublicKey, string(content), sig) != nil {
		return answer{}, fmt.Errorf("%w: %s: the answer does not verify with Alipay's public key", payments.ErrProvider, method)
	}
	var a answer
	if err := json.Unmarshal(content, &a); err != nil {
		return answer{}, fmt.Errorf("%w: %s: %v", payments.ErrProvider, method, err)
	}
	switch {
	case a.Code == "10000":
		return a, json.Unmarshal(content, out)
	case a.Code == "20000" || strings.HasSuffix(a.SubCode, "SYSTEM_ERROR"):
		return a, fmt.Errorf("%w: %s: %v", payments.ErrProvider, method, a)
	}
	return a, fmt.Errorf("%w: %s: %w", payments.ErrRefused, method, a)
}

// Query is alipay.trade.query by out_trade_no.
func (p *Provider) Query(ctx context.Context, s payments.StartedPayment) (payments.Queried, error) {
	var out struct {
		TradeNo     string `json:"trade_no"`
		TradeStatus string `json:"trade_status"`
		TotalAmount string `json:"total_amount"`
	}
	a, err := p.call(ctx, "alipay.trade.query", map[string]any{"out_trade_no": s.OutTradeNo}, &out)
	if a.SubCode == "ACQ.TRADE_NOT_EXIST" {
		return payments.Queried{Status: enums.PaymentFailed}, nil // the buyer never opened it
	}
	if err != nil {
		return payments.Queried{}, err
	}
	switch out.TradeStatus {
	case "TRADE_SUCCESS", "TRADE_FINISHED":
		amount, err := money.Parse(out.TotalAmount)
		if err != nil {
			return payments.Queried{}, fmt.Errorf("%w: total_amount %q", payments.ErrProvider, out.TotalAmount)
		}
		return payments.Queried{Status: enums.PaymentPaid, PaymentID: out.TradeNo, Amount: amount, Currency: "CNY"}, nil
	case "WAIT_BUYER_PAY":
		return payments.Queried{Status: enums.PaymentPending}, nil
	}
	return payments.Queried{Status: enums.PaymentFailed}, nil // TRADE_CLOSED
}

// Refund is alipay.trade.refund with out_request_no (the same number again
// is the same refund). Its answer 10000 says the call succeeded; only
// fund_change Y says money moved. Otherwise (N, or none: a repeat of a
// refund made before, or one not made) Alipay's rule is to ask the refund
// query, whose word is the refund's: refunded, or not (pending: sent again
// later with the same number).
func (p *Provider) Refund(ctx context.Context, r payments.RefundRequest) (payments.RefundResult, error) {
	var out struct {
		TradeNo    string `json:"trade_no"`
		RefundFee  string `json:"refund_fee"`
		FundChange string `json:"fund_change"`
	}
	_, err := p.call(ctx, "alipay.trade.refund", map[string]any{
		"trade_no": r.PaymentID, "out_trade_no": r.OrderSn, "refund_amount": r.Amount.String(),
		"out_request_no": r.RefundNo, "refund_reason": r.Reason,
	}, &out)
	if err != nil {
		return payments.RefundResult{}, err
	}
	res := payments.RefundResult{Status: enums.RefundSucceeded, ProviderRefundID: out.TradeNo + "/" + r.RefundNo}
	if out.FundChange == "Y" {
		return res, nil
	}
	done, err := p.refunded(ctx, r)
	if err != nil {
		return payments.RefundResult{}, err
	}
	if !done {
		res.Status = enums.RefundPending
	}
	return res, nil
}

// refunded is alipay.trade.fastpay.refund.query of refund r: 10000 only
// says the query ran; the refund is made when the answer names it
// (refund_status REFUND_SUCCESS, or without that field its out_request_no
// and refund_amount), and not made when it does not. An answer naming
// another amount is not believed (payments.ErrProvider).
func (p *Provider) refunded(ctx context.Context, r payments.RefundRequest) (bool, error) {
	var out struct {
		OutRequestNo string `json:"out_request_no"`
		RefundAmount string `json:"refund_amount"`
		RefundStatus string `json:"refund_status"`
	}
	_, err := p.call(ctx, "alipay.trade.fastpay.refund.query", map[string]any{
		"trade_no": r.PaymentID, "out_trade_no": r.OrderSn, "out_request_no": r.RefundNo,
	}, &out)
	if err != nil {
		return false, err
	}
	if out.RefundAmount == "" || out.OutRequestNo != "" && out.OutRequestNo != r.RefundNo ||
		out.RefundStatus != "" && out.RefundStatus != "REFUND_SUCCESS" {
		return false, nil
	}
	amount, err := money.Parse(out.RefundAmount)
	if err != nil || amount != r.Amount {
		return false, fmt.Errorf("%w: the refund query of %s answered refund_amount %q, sent %s", payments.ErrProvider, r.RefundNo, out.RefundAmount, r.Amount)
	}
	return true, nil
}
