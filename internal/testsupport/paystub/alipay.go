package paystub

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"storefront/internal/payments/alipay"
)

// Alipay plays Alipay's gateway (alipay.trade.query, alipay.trade.refund,
// alipay.trade.fastpay.refund.query)
// and signs its notifications.
type Alipay struct {
	Knobs
	*httptest.Server
	AppID  string
	App    *rsa.PrivateKey // the app's key (the shop signs with it)
	Alipay *rsa.PrivateKey // Alipay's key (it signs answers and notifications)

	mu      sync.Mutex
	trades  map[string]*AlipayTrade // by out_trade_no
	refunds map[string]string       // out_request_no → refund_amount
	// NoFundChange: this many refund requests are answered 10000 with
	// fund_change N and not made (the answer Alipay says to confirm with the
	// refund query).
	NoFundChange int
}

// AlipayTrade is a trade as the stand-in keeps it.
type AlipayTrade struct {
	OutTradeNo, TradeNo, Status, TotalAmount string
}

// NewAlipay starts an Alipay gateway stand-in with fresh keys.
func NewAlipay(t testing.TB) *Alipay {
	a := &Alipay{AppID: "2021000122671234", App: Key(t), Alipay: Key(t), trades: map[string]*AlipayTrade{}, refunds: map[string]string{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.gateway))
	t.Cleanup(a.Close)
	return a
}

// Config is the shop's configuration for this stand-in.
func (a *Alipay) Config(notifyURL string) alipay.Config {
	return alipay.Config{AppID: a.AppID, PrivateKey: a.App, PublicKey: &a.Alipay.PublicKey, Gateway: a.URL + "/gateway.do", NotifyURL: notifyURL}
}

// CheckRequest checks a request's parameters as the gateway does: the
// common ones and the RSA2 signature with the app's public key. It returns
// biz_content.
func (a *Alipay) CheckRequest(v url.Values) (map[string]any, error) {
	for k, want := range map[string]string{"app_id": a.AppID, "format": "JSON", "charset": "utf-8", "sign_type": "RSA2", "version": "1.0"} {
		if v.Get(k) != want {
			return nil, fmt.Errorf("%s = %q, want %q", k, v.Get(k), want)
		}
	}
	ts, err := time.ParseInLocation("2006-01-02 15:04:05", v.Get("timestamp"), time.FixedZone("CST", 8*3600))
	if err != nil || time.Since(ts).Abs() > 5*time.Minute {
		return nil, fmt.Errorf("timestamp %q", v.Get("timestamp"))
	}
	if err := alipay.Verify(&a.App.PublicKey, alipay.SignContent(v, "sign"), v.Get("sign")); err != nil {
		return nil, fmt.Errorf("sign does not verify with the app's public key: %v", err)
	}
	var biz map[string]any
	if err := json.Unmarshal([]byte(v.Get("biz_content")), &biz); err != nil {
		return nil, fmt.Errorf("biz_content: %v", err)
	}
	return biz, nil
}

func (a *Alipay) gateway(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v, err := url.ParseQuery(string(body))
	method := v.Get("method")
	if err != nil || r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		a.problem(fmt.Sprintf("not a form POST: %s %s", r.Method, r.Header.Get("Content-Type")))
	}
	biz, err := a.CheckRequest(v)
	if err != nil {
		a.problem(err.Error())
		a.answer(w, "error_response", map[string]any{"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-signature", "sub_msg": err.Error()})
		return
	}
	key := strings.ReplaceAll(method, ".", "_") + "_response"
	switch method {
	case "alipay.trade.query":
		a.mu.Lock()
		t := a.trades[fmt.Sprint(biz["out_trade_no"])]
		a.mu.Unlock()
		if t == nil {
			a.answer(w, key, map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TRADE_NOT_EXIST", "sub_msg": "交易不存在"})
			return
		}
		a.answer(w, key, map[string]any{"code": "10000", "msg": "Success", "trade_no": t.TradeNo, "out_trade_no": t.OutTradeNo,
			"trade_status": t.Status, "total_amount": t.TotalAmount, "buyer_logon_id": "159****5620"})
	case "alipay.trade.refund":
		no, _ := biz["out_request_no"].(string)
		amount, _ := biz["refund_amount"].(string)
		if no == "" || amount == "" || (biz["trade_no"] == nil && biz["out_trade_no"] == nil) {
			a.problem(fmt.Sprintf("refund: %v", biz))
		}
		drop, refuse, _ := a.Knobs.refund(no)
		if drop {
			hangUp(w)
			return
		}
		if refuse {
			a.answer(w, key, map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.SELLER_BALANCE_NOT_ENOUGH", "sub_msg": "卖家余额不足"})
			return
		}
		a.mu.Lock()
		_, again := a.refunds[no]
		unmade := !again && a.NoFundChange > 0
		if unmade {
			a.NoFundChange--
		} else {
			a.refunds[no] = amount
		}
		a.mu.Unlock()
		change := "Y"
		if again || unmade { // the same out_request_no: the same refund, no new money moves
			change = "N"
		}
		a.answer(w, key, map[string]any{"code": "10000", "msg": "Success", "trade_no": biz["trade_no"], "out_trade_no": biz["out_trade_no"],
			"buyer_logon_id": "159****5620", "fund_change": change, "refund_fee": amount})
	case "alipay.trade.fastpay.refund.query":
		no, _ := biz["out_request_no"].(string)
		if no == "" || (biz["trade_no"] == nil && biz["out_trade_no"] == nil) {
			a.problem(fmt.Sprintf("refund query: %v", biz))
		}
		a.mu.Lock()
		amount, made := a.refunds[no]
		a.mu.Unlock()
		content := map[string]any{"code": "10000", "msg": "Success", "trade_no": biz["trade_no"], "out_trade_no": biz["out_trade_no"]}
		if made { // a refund not made is answered 10000 with none of its fields
			content["out_request_no"], content["refund_amount"] = no, amount
		}
		a.answer(w, key, content)
	default:
		a.problem("unknown method " + method)
		a.answer(w, "error_response", map[string]any{"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-method"})
	}
}

// answer writes {"<key>": content, "sign": …}, the sign over content's
// bytes as sent.
func (a *Alipay) answer(w http.ResponseWriter, key string, content map[string]any) {
	c, _ := json.Marshal(content)
	sig, err := alipay.Sign(a.Alipay, string(c))
	if err != nil {
		panic(err)
	}
	k, _ := json.Marshal(key)
	s, _ := json.Marshal(sig)
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	_, _ = fmt.Fprintf(w, `{%s:%s,"sign":%s}`, k, c, s)
}

// Pay makes a trade paid and returns it.
func (a *Alipay) Pay(outTradeNo, total string) *AlipayTrade {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := &AlipayTrade{OutTradeNo: outTradeNo, TradeNo: "2026010122001" + outTradeNo[len(outTradeNo)-12:], Status: "TRADE_SUCCESS", TotalAmount: total}
	a.trades[outTradeNo] = t
	return t
}

// Notification is an asynchronous notification's form body, signed with
// key (nil: Alipay's) over every parameter but sign and sign_type.
func (a *Alipay) Notification(params url.Values, key *rsa.PrivateKey) []byte {
	v := url.Values{}
	for k, vs := range params {
		v[k] = vs
	}
	if key == nil {
		key = a.Alipay
	}
	sig, err := alipay.Sign(key, alipay.SignContent(v, "sign", "sign_type"))
	if err != nil {
		panic(err)
	}
	if v.Get("sign_type") == "" {
		v.Set("sign_type", "RSA2")
	}
	v.Set("sign", sig)
	return []byte(v.Encode())
}

// PaidParams are TRADE_SUCCESS's parameters for trade t.
func (a *Alipay) PaidParams(notifyID string, t *AlipayTrade) url.Values {
	now := time.Now().In(time.FixedZone("CST", 8*3600)).Format("2006-01-02 15:04:05")
	return url.Values{"notify_time": {now}, "notify_type": {"trade_status_sync"}, "notify_id": {notifyID}, "app_id": {a.AppID},
		"charset": {"utf-8"}, "version": {"1.0"}, "trade_no": {t.TradeNo}, "out_trade_no": {t.OutTradeNo},
		"trade_status": {t.Status}, "total_amount": {t.TotalAmount}, "receipt_amount": {t.TotalAmount},
		"buyer_pay_amount": {t.TotalAmount}, "gmt_create": {now}, "gmt_payment": {now}, "seller_id": {"2088102119685838"},
		"subject": {"T恤 黑色 L"}}
}
