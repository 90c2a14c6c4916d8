package paystub

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"storefront/internal/payments/wechatpay"
)

// WeChat plays WeChat Pay API v3 (Native pay, queries, refunds).
type WeChat struct {
	Knobs
	*httptest.Server
	MchID, AppID, Serial, PublicKeyID string
	APIv3Key                          []byte
	Merchant                          *rsa.PrivateKey // the merchant's key (the shop signs with it)
	Platform                          *rsa.PrivateKey // WeChat Pay's key (it signs answers and notifications)

	mu      sync.Mutex
	trades  map[string]*Trade // by out_trade_no
	refunds map[string]string // out_refund_no → refund_id
	Native  []map[string]any  // every native order request body
}

// Trade is a trade as the stand-in keeps it.
type Trade struct {
	OutTradeNo, TransactionID, State string
	Total                            int64
	TimeExpire                       string
}

// NewWeChat starts a WeChat Pay stand-in with fresh keys.
func NewWeChat(t testing.TB) *WeChat {
	var k [32]byte
	_, _ = rand.Read(k[:])
	w := &WeChat{MchID: "1900009191", AppID: "wxd678efh567hg6787", Serial: "5157F09EFDC096DE15EBE81A47057A7232F1B8E1",
		PublicKeyID: "PUB_KEY_ID_0119000091912025010100000000000000", APIv3Key: []byte(hex.EncodeToString(k[:16])),
		Merchant: Key(t), Platform: Key(t), trades: map[string]*Trade{}, refunds: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/pay/transactions/native", w.native)
	mux.HandleFunc("GET /v3/pay/transactions/out-trade-no/{no}", w.query)
	mux.HandleFunc("POST /v3/refund/domestic/refunds", w.refund)
	w.Server = httptest.NewServer(mux)
	t.Cleanup(w.Close)
	return w
}

// Config is the shop's configuration for this stand-in.
func (w *WeChat) Config(notifyURL string) wechatpay.Config {
	return wechatpay.Config{MchID: w.MchID, AppID: w.AppID, Serial: w.Serial, PrivateKey: w.Merchant,
		PublicKey: &w.Platform.PublicKey, PublicKeyID: w.PublicKeyID, APIv3Key: w.APIv3Key, BaseURL: w.URL, NotifyURL: notifyURL}
}

// authorized checks a request's Authorization as WeChat Pay does: the
// type, the merchant, the certificate serial, the time, and the signature
// over method, path and query, timestamp, nonce and body with the
// merchant's public key.
func (w *WeChat) authorized(r *http.Request, body []byte) bool {
	f, err := wechatpay.ParseAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		w.problem(err.Error())
		return false
	}
	ts, err := strconv.ParseInt(f["timestamp"], 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		w.problem("timestamp " + f["timestamp"])
		return false
	}
	msg := wechatpay.Message(r.Method, r.URL.RequestURI(), ts, f["nonce_str"], string(body))
	if f["mchid"] != w.MchID || f["serial_no"] != w.Serial || len(f["nonce_str"]) == 0 ||
		wechatpay.Verify(&w.Merchant.PublicKey, msg, f["signature"]) != nil {
		w.problem("signature does not verify: " + r.Header.Get("Authorization"))
		return false
	}
	return true
}

// answer writes a signed answer.
func (w *WeChat) answer(rw http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	for k, vs := range w.sign(body, time.Now()) {
		rw.Header()[k] = vs
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_, _ = rw.Write(body)
}

// sign is the Wechatpay-* headers of body signed at t.
func (w *WeChat) sign(body []byte, t time.Time) http.Header {
	ts, n := strconv.FormatInt(t.Unix(), 10), fmt.Sprintf("%X", t.UnixNano())
	sig, err := wechatpay.Sign(w.Platform, wechatpay.ResponseMessage(ts, n, string(body)))
	if err != nil {
		panic(err)
	}
	return http.Header{wechatpay.HeaderTimestamp: {ts}, wechatpay.HeaderNonce: {n}, wechatpay.HeaderSignature: {sig},
		wechatpay.HeaderSerial: {w.PublicKeyID}, "Content-Type": {"application/json"}}
}

func (w *WeChat) read(rw http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	body, _ := io.ReadAll(r.Body)
	if !w.authorized(r, body) {
		w.answer(rw, http.StatusUnauthorized, map[string]string{"code": "SIGN_ERROR", "message": "签名错误"})
		return nil, false
	}
	var in map[string]any
	if len(body) > 0 && json.Unmarshal(body, &in) != nil {
		w.problem("body is not JSON")
		w.answer(rw, http.StatusBadRequest, map[string]string{"code": "PARAM_ERROR", "message": "json"})
		return nil, false
	}
	return in, true
}

func (w *WeChat) native(rw http.ResponseWriter, r *http.Request) {
	in, ok := w.read(rw, r)
	if !ok {
		return
	}
	amount, _ := in["amount"].(map[string]any)
	total, isNum := amount["total"].(float64)
	no, _ := in["out_trade_no"].(string)
	exp, _ := in["time_expire"].(string)
	if _, err := time.Parse(time.RFC3339, exp); err != nil || in["appid"] != w.AppID || in["mchid"] != w.MchID ||
		!isNum || total <= 0 || total != float64(int64(total)) || no == "" || in["notify_url"] == "" || in["description"] == "" {
		w.problem(fmt.Sprintf("native order: %v", in))
		w.answer(rw, http.StatusBadRequest, map[string]string{"code": "PARAM_ERROR", "message": "参数错误"})
		return
	}
	w.mu.Lock()
	w.Native = append(w.Native, in)
	if w.trades[no] == nil {
		w.trades[no] = &Trade{OutTradeNo: no, State: "NOTPAY", Total: int64(total), TimeExpire: exp}
	}
	w.mu.Unlock()
	w.answer(rw, http.StatusOK, map[string]string{"code_url": "weixin://wxpay/bizpayurl?pr=" + no})
}

// Pay makes a trade paid (the buyer scanned and paid) and returns it.
func (w *WeChat) Pay(outTradeNo string, total int64) *Trade {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.trades[outTradeNo]
	if t == nil {
		t = &Trade{OutTradeNo: outTradeNo, Total: total}
		w.trades[outTradeNo] = t
	}
	t.State, t.TransactionID = "SUCCESS", "4200000"+outTradeNo
	return t
}

// SetState sets the trade_state queries answer for a trade the shop
// started (USERPAYING: the buyer is still paying).
func (w *WeChat) SetState(outTradeNo, state string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.trades[outTradeNo]; t != nil {
		t.State = state
	}
}

func (w *WeChat) query(rw http.ResponseWriter, r *http.Request) {
	if _, ok := w.read(rw, r); !ok {
		return
	}
	if r.URL.Query().Get("mchid") != w.MchID {
		w.problem("query without mchid")
	}
	w.mu.Lock()
	t := w.trades[r.PathValue("no")]
	w.mu.Unlock()
	if t == nil {
		w.answer(rw, http.StatusNotFound, map[string]string{"code": "ORDER_NOT_EXIST", "message": "订单不存在"})
		return
	}
	w.answer(rw, http.StatusOK, w.transaction(t))
}

func (w *WeChat) transaction(t *Trade) map[string]any {
	return map[string]any{"appid": w.AppID, "mchid": w.MchID, "out_trade_no": t.OutTradeNo, "transaction_id": t.TransactionID,
		"trade_type": "NATIVE", "trade_state": t.State, "trade_state_desc": t.State, "success_time": "2026-01-01T10:00:00+08:00",
		"payer": map[string]string{"openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"}, "amount": map[string]any{"total": t.Total,
			"payer_total": t.Total, "currency": "CNY", "payer_currency": "CNY"}}
}

func (w *WeChat) refund(rw http.ResponseWriter, r *http.Request) {
	in, ok := w.read(rw, r)
	if !ok {
		return
	}
	no, _ := in["out_refund_no"].(string)
	amount, _ := in["amount"].(map[string]any)
	if no == "" || in["transaction_id"] == "" || amount["refund"] == nil || amount["total"] == nil || amount["currency"] != "CNY" {
		w.problem(fmt.Sprintf("refund: %v", in))
	}
	drop, refuse, settle := w.Knobs.refund(no)
	if drop {
		hangUp(rw)
		return
	}
	if refuse {
		w.answer(rw, http.StatusForbidden, map[string]string{"code": "NOT_ENOUGH", "message": "基本账户余额不足"})
		return
	}
	w.mu.Lock()
	id, seen := w.refunds[no]
	if !seen {
		id = "50000000382019052709732678859" + strconv.Itoa(len(w.refunds))
		w.refunds[no] = id
	}
	w.mu.Unlock()
	status := "PROCESSING"
	if settle {
		status = "SUCCESS"
	}
	w.answer(rw, http.StatusOK, map[string]any{"refund_id": id, "out_refund_no": no, "transaction_id": in["transaction_id"],
		"channel": "ORIGINAL", "status": status, "amount": amount})
}

// RefundID is the refund_id the stand-in gave refund number no.
func (w *WeChat) RefundID(no string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refunds[no]
}

// Notice is one notification to send, and how to break it.
type Notice struct {
	ID, EventType, OriginalType string
	Resource                    any
	At                          time.Time       // zero: now
	Serial                      string          // "": the public key's id
	Key                         *rsa.PrivateKey // nil: WeChat Pay's
}

// Notification is n as WeChat Pay sends it: the resource encrypted under
// the APIv3 key, the body signed.
func (w *WeChat) Notification(n Notice) (http.Header, []byte) {
	plain, _ := json.Marshal(n.Resource)
	nonce := fmt.Sprintf("%012d", time.Now().UnixNano()%1e12)
	ct, err := wechatpay.Encrypt(w.APIv3Key, nonce, n.OriginalType, plain)
	if err != nil {
		panic(err)
	}
	summary := map[string]string{"TRANSACTION.SUCCESS": "支付成功", "REFUND.SUCCESS": "退款成功"}[n.EventType]
	body, _ := json.Marshal(map[string]any{"id": n.ID, "create_time": time.Now().Format(time.RFC3339), "resource_type": "encrypt-resource",
		"event_type": n.EventType, "summary": summary, "resource": map[string]string{"original_type": n.OriginalType,
			"algorithm": "AEAD_AES_256_GCM", "ciphertext": ct, "associated_data": n.OriginalType, "nonce": nonce}})
	at := n.At
	if at.IsZero() {
		at = time.Now()
	}
	h := w.sign(body, at)
	if n.Key != nil {
		ts, nn := h.Get(wechatpay.HeaderTimestamp), h.Get(wechatpay.HeaderNonce)
		sig, _ := wechatpay.Sign(n.Key, wechatpay.ResponseMessage(ts, nn, string(body)))
		h.Set(wechatpay.HeaderSignature, sig)
	}
	if n.Serial != "" {
		h.Set(wechatpay.HeaderSerial, n.Serial)
	}
	return h, body
}

// PaidNotice is TRANSACTION.SUCCESS for trade t.
func (w *WeChat) PaidNotice(id string, t *Trade) Notice {
	res := w.transaction(t)
	return Notice{ID: id, EventType: "TRANSACTION.SUCCESS", OriginalType: "transaction", Resource: res}
}

// RefundNotice is REFUND.SUCCESS (or another status) for a refund.
func (w *WeChat) RefundNotice(id, eventType, outRefundNo, transactionID, outTradeNo string, total, refund int64) Notice {
	return Notice{ID: id, EventType: eventType, OriginalType: "refund", Resource: map[string]any{
		"mchid": w.MchID, "out_trade_no": outTradeNo, "transaction_id": transactionID, "out_refund_no": outRefundNo,
		"refund_id": w.RefundID(outRefundNo), "refund_status": strings.TrimPrefix(eventType, "REFUND."),
		"success_time": "2026-01-01T10:00:00+08:00", "user_received_account": "招商银行信用卡0403",
		"amount": map[string]any{"total": total, "refund": refund, "payer_total": total, "payer_refund": refund}}}
}
