package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/payments"
	"storefront/internal/payments/alipay"
	"storefront/internal/payments/stripe"
	"storefront/internal/payments/wechatpay"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/paystub"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// breakage is one way a notification is wrong.
type breakage struct {
	amount                  *money.Money
	currency, merchant      string
	forged, otherKey, stale bool
	future                  bool // signed 6 minutes ahead
	otherApp                bool // WeChat Pay: another AppID (the merchant's mchid kept)
}

// stand is one provider played by its stand-in, as these tests drive it.
type stand struct {
	name, route string
	knobs       *paystub.Knobs
	// paid is a notification that order o was paid as paymentID, event ev.
	paid func(o *ent.Order, paymentID, ev string, b breakage) (http.Header, []byte)
	// accepted and refused check an answer as the protocol words it.
	accepted, refused func(status int, body []byte) bool
	// payAt makes the provider hold order o paid (its notification lost);
	// it returns the payment id.
	payAt func(o *ent.Order) string
	// refundDone is the provider's confirmation of a refund (nil: its
	// answer to the send confirms it).
	refundDone func(o *ent.Order, paymentID, refundNo string, amount money.Money) (http.Header, []byte)
	// started checks what the provider received when order o's payment
	// started, and the start's answer.
	started func(t *testing.T, o *ent.Order, st *payments.Started)
}

// pfix is a shop with the three providers, each played by its stand-in,
// and its notification routes on a local server.
// refund is refundOrder, which the after-sales decide and payments sends.
func (f *pfix) refund(ctx context.Context, orderSn, reason string) (*checkout.Order, error) {
	return f.as.RefundOrder(ctx, admin, orderSn, reason)
}

type pfix struct {
	db     *store.DB
	svc    *payments.Service
	orders *checkout.Service
	as     *aftersale.Service
	srv    *httptest.Server
	itemID int64
	stands []stand
	wx     *paystub.WeChat
	ali    *paystub.Alipay
	st     *paystub.Stripe
}

func providerSetup(t *testing.T, db *store.DB) *pfix {
	t.Helper()
	ids, err := demo.Seed(context.Background(), catalog.New(db, catalog.DefaultConfig()))
	if err != nil {
		t.Fatal(err)
	}
	f := &pfix{db: db, wx: paystub.NewWeChat(t), ali: paystub.NewAlipay(t), st: paystub.NewStripe(t)}
	f.itemID = db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.StockGT(50)).FirstX(context.Background()).ID
	wc, ac, sc := f.wx.Config("https://shop.example/payments/wechatpay/notify"), f.ali.Config("https://shop.example/payments/alipay/notify"), f.st.Config("CNY")
	cfg := payments.DefaultConfig()
	cfg.RefundRetry = time.Millisecond // a lost send is due again at once
	for _, c := range []interface{ Validate() error }{wc, ac, sc} {
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	cfg = cfg.With(wechatpay.New(wc), alipay.New(ac), stripe.New(sc))
	f.orders, f.svc, f.as = app.Orders(db, checkout.DefaultConfig(), cfg, aftersale.DefaultConfig())
	h := server.NotifyHandler(f.svc, cfg.MaxBody)
	mux := http.NewServeMux()
	mux.Handle("POST /payments/{provider}/notify", h)
	for path, provider := range cfg.Routes() {
		mux.Handle("POST "+path, server.ForProvider(provider, h))
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.stands = []stand{f.wechatStand(), f.alipayStand(), f.stripeStand()}
	return f
}

func (f *pfix) wechatStand() stand {
	w := f.wx
	return stand{name: "wechatpay", route: "/payments/wechatpay/notify", knobs: &w.Knobs,
		paid: func(o *ent.Order, pid, ev string, b breakage) (http.Header, []byte) {
			n := w.PaidNotice(ev, &paystub.Trade{OutTradeNo: o.OrderSn, TransactionID: pid, State: "SUCCESS", Total: int64(o.Amount)})
			res := n.Resource.(map[string]any)
			amount := res["amount"].(map[string]any)
			if b.amount != nil {
				amount["total"] = int64(*b.amount)
			}
			if b.currency != "" {
				amount["currency"] = b.currency
			}
			if b.merchant != "" {
				res["mchid"] = b.merchant
			}
			if b.forged {
				n.Key = paystub.Key(&testing.T{})
			}
			if b.otherKey {
				n.Serial = "PUB_KEY_ID_0000000000000000000000000000000000"
			}
			if b.stale {
				n.At = time.Now().Add(-6 * time.Minute)
			}
			if b.future {
				n.At = time.Now().Add(6 * time.Minute)
			}
			if b.otherApp {
				res["appid"] = "wx0000000000000000"
			}
			return w.Notification(n)
		},
		accepted: func(status int, body []byte) bool { return status == 200 && len(body) == 0 },
		refused: func(status int, body []byte) bool {
			var r struct{ Code, Message string }
			return status >= 400 && json.Unmarshal(body, &r) == nil && r.Code == "FAIL" && r.Message != ""
		},
		payAt: func(o *ent.Order) string { return w.Pay(o.OrderSn, int64(o.Amount)).TransactionID },
		refundDone: func(o *ent.Order, pid, no string, amount money.Money) (http.Header, []byte) {
			return w.Notification(w.RefundNotice(fmt.Sprint("EV-R-", no, amount), "REFUND.SUCCESS", no, pid, o.OrderSn, int64(o.Amount), int64(amount)))
		},
		started: func(t *testing.T, o *ent.Order, st *payments.Started) {
			if len(w.Native) == 0 {
				t.Fatal("no native order reached WeChat Pay")
			}
			in := w.Native[len(w.Native)-1]
			amount := in["amount"].(map[string]any)
			want := o.ExpiresAt.In(time.FixedZone("CST", 8*3600)).Format(time.RFC3339)
			if in["out_trade_no"] != o.OrderSn || amount["total"] != float64(o.Amount) || amount["currency"] != "CNY" ||
				in["time_expire"] != want || in["notify_url"] != "https://shop.example/payments/wechatpay/notify" {
				t.Errorf("native order %v; want out_trade_no %s, total %d fen, time_expire %s", in, o.OrderSn, int64(o.Amount), want)
			}
			if st.QrCode() == nil || *st.QrCode() != "weixin://wxpay/bizpayurl?pr="+o.OrderSn {
				t.Errorf("qrCode %v", st.QrCode())
			}
		},
	}
}

func (f *pfix) alipayStand() stand {
	a := f.ali
	params := func(o *ent.Order, pid, ev string, b breakage) url.Values {
		v := a.PaidParams(ev, &paystub.AlipayTrade{OutTradeNo: o.OrderSn, TradeNo: pid, Status: "TRADE_SUCCESS", TotalAmount: o.Amount.String()})
		if b.amount != nil {
			v.Set("total_amount", b.amount.String())
		}
		if b.currency != "" {
			v.Set("trans_currency", b.currency)
		}
		if b.merchant != "" {
			v.Set("app_id", b.merchant)
		}
		if b.otherKey {
			v.Set("sign_type", "RSA") // the retired SHA1 type: not what this app signs with
		}
		return v
	}
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}}
	return stand{name: "alipay", route: "/payments/alipay/notify", knobs: &a.Knobs,
		paid: func(o *ent.Order, pid, ev string, b breakage) (http.Header, []byte) {
			var key = a.Alipay
			if b.forged {
				key = paystub.Key(&testing.T{})
			}
			return form, a.Notification(params(o, pid, ev, b), key)
		},
		accepted: func(status int, body []byte) bool { return status == 200 && string(body) == "success" },
		refused:  func(status int, body []byte) bool { return status >= 400 && string(body) != "success" },
		payAt: func(o *ent.Order) string {
			return a.Pay(o.OrderSn, o.Amount.String()).TradeNo
		},
		started: func(t *testing.T, o *ent.Order, st *payments.Started) {
			if st.RedirectURL() == nil {
				t.Fatal("no redirect URL")
			}
			u, err := url.Parse(*st.RedirectURL())
			if err != nil || u.Scheme+"://"+u.Host+u.Path != a.URL+"/gateway.do" {
				t.Fatalf("redirect URL %q", *st.RedirectURL())
			}
			biz, err := a.CheckRequest(u.Query())
			if err != nil {
				t.Fatalf("the page pay URL does not verify as Alipay checks it: %v", err)
			}
			want := o.ExpiresAt.In(time.FixedZone("CST", 8*3600)).Format("2006-01-02 15:04:05")
			if u.Query().Get("method") != "alipay.trade.page.pay" || biz["out_trade_no"] != o.OrderSn || biz["total_amount"] != o.Amount.String() ||
				biz["product_code"] != "FAST_INSTANT_TRADE_PAY" || biz["time_expire"] != want || u.Query().Get("notify_url") != "https://shop.example/payments/alipay/notify" {
				t.Errorf("page pay %v %v; want total_amount %s yuan, time_expire %s", u.Query(), biz, o.Amount, want)
			}
		},
	}
}

func (f *pfix) stripeStand() stand {
	s := f.st
	return stand{name: "stripe", route: "/payments/stripe/webhook", knobs: &s.Knobs,
		paid: func(o *ent.Order, pid, ev string, b breakage) (http.Header, []byte) {
			pi := map[string]any{"id": pid, "object": "payment_intent", "amount": int64(o.Amount), "currency": "cny",
				"status": "succeeded", "metadata": map[string]string{"orderSn": o.OrderSn}}
			if b.amount != nil {
				pi["amount"] = int64(*b.amount)
			}
			if b.currency != "" {
				pi["currency"] = b.currency
			}
			secret, at := "", time.Time{}
			if b.forged {
				secret = "whsec_forged"
			}
			if b.otherKey {
				secret = "whsec_another_endpoint"
			}
			if b.stale {
				at = time.Now().Add(-6 * time.Minute)
			}
			if b.future {
				at = time.Now().Add(6 * time.Minute)
			}
			return s.Event(ev, "payment_intent.succeeded", pi, b.merchant, secret, at)
		},
		accepted: func(status int, body []byte) bool { return status == 200 },
		refused:  func(status int, body []byte) bool { return status >= 400 },
		payAt: func(o *ent.Order) string {
			return s.Succeed(o.OrderSn, int64(o.Amount), "cny")["id"].(string)
		},
		refundDone: func(o *ent.Order, pid, no string, amount money.Money) (http.Header, []byte) {
			return s.Event(fmt.Sprint("evt_R_", no, amount), "refund.updated", paystub.RefundObject("re_x", pid, no, int64(amount), "cny", "succeeded"), "", "", time.Time{})
		},
		started: func(t *testing.T, o *ent.Order, st *payments.Started) {
			if len(s.Created) == 0 {
				t.Fatal("no PaymentIntent reached Stripe")
			}
			v := s.Created[len(s.Created)-1]
			if v.Get("amount") != strconv.FormatInt(int64(o.Amount), 10) || v.Get("currency") != "cny" || v.Get("metadata[orderSn]") != o.OrderSn {
				t.Errorf("PaymentIntent %v; want amount %d (minor units), cny, metadata[orderSn] %s", v, int64(o.Amount), o.OrderSn)
			}
			if st.ClientSecret() == nil || *st.ClientSecret() == "" {
				t.Errorf("clientSecret %v", st.ClientSecret())
			}
		},
	}
}

// post sends a notification to route and returns the answer.
func (f *pfix) post(t *testing.T, route string, h http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+route, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// place places a real order of two units (a refund has stock to restore).
func (f *pfix) place(t *testing.T, key string) *ent.Order {
	t.Helper()
	item := f.itemID
	p, err := f.orders.Place(context.Background(), checkout.PlaceInput{UserID: "u1", Items: []checkout.ItemInput{{ItemID: &item, Quantity: 2}}, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return f.db.Client.Order.GetX(context.Background(), p.ID)
}

func (f *pfix) written(t *testing.T) [4]int {
	ctx := context.Background()
	return [4]int{f.db.Client.Payment.Query().CountX(ctx), f.db.Client.PaymentEvent.Query().CountX(ctx),
		f.db.Client.Outbox.Query().CountX(ctx), f.db.Client.Refund.Query().CountX(ctx)}
}

func (f *pfix) status(o *ent.Order) enums.OrderStatus {
	return f.db.Client.Order.GetX(context.Background(), o.ID).Status
}
