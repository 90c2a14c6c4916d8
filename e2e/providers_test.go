package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/paystub"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/money"
)

// Each provider end to end through the real binary, against its local
// stand-in: the keys are files as a shop gets them, startPayment reaches the
// provider, the provider's notification pays the order, refundOrder sends
// the refund, and its confirmation refunds the order and restores the stock.
func TestProvidersThroughTheBinary(t *testing.T) {
	wx, ali, st := paystub.NewWeChat(t), paystub.NewAlipay(t), paystub.NewStripe(t)
	st.Set(func(k *paystub.Knobs) { k.Settle = true })
	dir := t.TempDir()
	wxKey, _ := paystub.WritePEM(t, dir, "wechat_merchant", wx.Merchant)
	_, wxPub := paystub.WritePEM(t, dir, "wechat_platform", wx.Platform)
	aliKey, _ := paystub.WritePEM(t, dir, "alipay_app", ali.App)
	_, aliPub := paystub.WritePEM(t, dir, "alipay_alipay", ali.Alipay)
	// A provider switched on with part of its settings: serve refuses to start.
	out, err := exec.Command(binary(t), "serve", "--demo", "--db", "sqlite:"+dir+"/refused.db", "--wechatpay-mchid", wx.MchID).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--wechatpay-appid") {
		t.Errorf("serve with an incomplete WeChat Pay: %v\n%s", err, out)
	}

	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			addr := freeAddr(t)
			flags := []string{"--public-url", "http://" + addr,
				"--wechatpay-mchid", wx.MchID, "--wechatpay-appid", wx.AppID, "--wechatpay-serial", wx.Serial,
				"--wechatpay-private-key", wxKey, "--wechatpay-public-key", wxPub, "--wechatpay-public-key-id", wx.PublicKeyID,
				"--wechatpay-apiv3-key", string(wx.APIv3Key), "--wechatpay-base-url", wx.URL,
				"--alipay-app-id", ali.AppID, "--alipay-private-key", aliKey, "--alipay-public-key", aliPub, "--alipay-gateway", ali.URL + "/gateway.do",
				"--stripe-secret-key", st.SecretKey, "--stripe-webhook-secret", st.WebhookSecret, "--stripe-base-url", st.URL}
			s := StartAt(t, addr, testdb.Spec(t, b), flags...)
			id, stock := tshirtSku(t, s, "黑色,L")
			const start = `mutation($sn: String!, $p: String!) { startPayment(orderSn: $sn, provider: $p) { provider outTradeNo qrCode redirectUrl clientSecret expiresAt } }`
			const orderQ = `query($sn: String!) { order(orderSn: $sn) { status payment { provider paymentId status } refunds { refundNo status } } }`
			const refundQ = `mutation($sn: String!) { refundOrder(orderSn: $sn, reason: "e2e") { status refunds { refundNo status } } }`
			type view struct {
				Order struct {
					Status  string
					Payment *struct{ Provider, PaymentID, Status string }
					Refunds []struct{ RefundNo, Status string }
				}
			}
			notify := func(route string, h http.Header, body []byte) (int, string) {
				req, _ := http.NewRequest("POST", s.URL+route, bytes.NewReader(body))
				for k, v := range h {
					req.Header[k] = v
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			for _, p := range []string{"wechatpay", "alipay", "stripe"} {
				t.Run(p, func(t *testing.T) {
					var o placed
					decode(t, s.queryWithKey(t, s.CustomerToken, "e2e-"+p, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 2}}}), &o)
					sn, amount := o.PlaceOrder.OrderSn, money.MustParse(o.PlaceOrder.Amount)
					var started struct {
						StartPayment struct {
							Provider, OutTradeNo, ExpiresAt   string
							QrCode, RedirectURL, ClientSecret *string
						}
					}
					decode(t, s.Query(t, s.CustomerToken, start, map[string]any{"sn": sn, "p": p}), &started)
					if r := s.Query(t, s.AdminToken, start, map[string]any{"sn": sn, "p": p}); r.Code() != "FORBIDDEN" {
						t.Errorf("another user's startPayment: %q", r.Code())
					}
					var route, pid string
					var h http.Header
					var body []byte
					switch p {
					case "wechatpay":
						if started.StartPayment.QrCode == nil {
							t.Fatalf("no qrCode: %+v", started)
						}
						trade := wx.Pay(sn, int64(amount))
						route, pid = "/payments/wechatpay/notify", trade.TransactionID
						h, body = wx.Notification(wx.PaidNotice("EV-e2e-"+sn, trade))
					case "alipay":
						u, err := url.Parse(*started.StartPayment.RedirectURL)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := ali.CheckRequest(u.Query()); err != nil || u.Query().Get("notify_url") != "http://"+addr+"/payments/alipay/notify" {
							t.Fatalf("page pay URL: %v %v", err, u.Query())
						}
						trade := ali.Pay(sn, amount.String())
						route, pid = "/payments/alipay/notify", trade.TradeNo
						h, body = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, ali.Notification(ali.PaidParams("N-e2e-"+sn, trade), nil)
					case "stripe":
						if started.StartPayment.ClientSecret == nil {
							t.Fatalf("no clientSecret: %+v", started)
						}
						pi := st.Succeed(sn, int64(amount), "cny")
						route, pid = "/payments/stripe/webhook", pi["id"].(string)
						h, body = st.Event("evt_e2e_"+sn, "payment_intent.succeeded", pi, "", "", time.Time{})
					}
					if code, answer := notify(route, h, body); code != 200 {
						t.Fatalf("notification: HTTP %d %q", code, answer)
					}
					var v view
					decode(t, s.Query(t, s.CustomerToken, orderQ, map[string]any{"sn": sn}), &v)
					if v.Order.Status != "PAID" || v.Order.Payment == nil || v.Order.Payment.PaymentID != pid || v.Order.Payment.Provider != p {
						t.Fatalf("after the notification: %+v", v.Order)
					}
					decode(t, s.Query(t, s.AdminToken, refundQ, map[string]any{"sn": sn}), &v)
					if p == "wechatpay" { // PROCESSING until REFUND.SUCCESS
						var r struct {
							RefundOrder struct {
								Status  string
								Refunds []struct{ RefundNo, Status string }
							}
						}
						decode(t, s.Query(t, s.AdminToken, refundQ, map[string]any{"sn": sn}), &r)
						if r.RefundOrder.Status != "PAID" || len(r.RefundOrder.Refunds) != 1 || r.RefundOrder.Refunds[0].Status != "PENDING" {
							t.Fatalf("refund before WeChat Pay confirmed: %+v", r)
						}
						no := r.RefundOrder.Refunds[0].RefundNo
						rh, rb := wx.Notification(wx.RefundNotice("EV-R-"+sn, "REFUND.SUCCESS", no, pid, sn, int64(amount), int64(amount)))
						if code, answer := notify(route, rh, rb); code != 200 {
							t.Fatalf("REFUND.SUCCESS: HTTP %d %q", code, answer)
						}
					}
					decode(t, s.Query(t, s.AdminToken, orderQ, map[string]any{"sn": sn}), &v)
					if v.Order.Status != "REFUNDED" || len(v.Order.Refunds) != 1 || v.Order.Refunds[0].Status != "SUCCEEDED" {
						t.Fatalf("after the refund: %+v", v.Order)
					}
					if got := balance(t, s, id); got != stock {
						t.Errorf("ledger balance %d, want %d (restored)", got, stock)
					}
				})
			}
		})
	}
	for name, k := range map[string]*paystub.Knobs{"wechatpay": &wx.Knobs, "alipay": &ali.Knobs, "stripe": &st.Knobs} {
		if p := k.Faults(); len(p) > 0 {
			t.Errorf("%s's stand-in saw requests break its rules: %q", name, p)
		}
	}
}
