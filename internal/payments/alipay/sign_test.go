package alipay

import (
	"net/url"
	"testing"
)

// The text to sign, as Alipay's documentation spells it for its own
// examples: a request (the signing guide's alipay.mobile.public.menu.add,
// whose sign is left out) and an asynchronous notification (the
// notification guide's, whose sign and sign_type are left out).
func TestSignContentReproducesThePublishedExamples(t *testing.T) {
	request := url.Values{
		"app_id":      {"2014072300007148"},
		"method":      {"alipay.mobile.public.menu.add"},
		"charset":     {"GBK"},
		"sign_type":   {"RSA2"},
		"timestamp":   {"2014-07-24 03:07:50"},
		"biz_content": {`{"button":[{"actionParam":"ZFB_HFCZ","actionType":"out","name":"话费充值"},{"name":"查询","subButton":[{"actionParam":"ZFB_YECX","actionType":"out","name":"余额查询"},{"actionParam":"ZFB_LLCX","actionType":"out","name":"流量查询"},{"actionParam":"ZFB_HFCX","actionType":"out","name":"话费查询"}]},{"actionParam":"http://m.alipay.com","actionType":"link","name":"最新优惠"}]}`},
		"sign":        {"e9zEAe4TTQ4LPLQvETPoLGXTiURcxiAKfMVQ6Hrrsx2hmyIEGvSfAQzbLxHrhyZ48wOJXTsD4FPnt+YGdK57+fP1BCbf9rIVycfjhYCqlFhbTu9pFnZgT55W+xbAFb9y7vL0MyAxwXUXvZtQVqEwW7pURtKilbcBTEW7TAxzgro="},
		"version":     {"1.0"},
	}
	const wantRequest = `app_id=2014072300007148&biz_content={"button":[{"actionParam":"ZFB_HFCZ","actionType":"out","name":"话费充值"},{"name":"查询","subButton":[{"actionParam":"ZFB_YECX","actionType":"out","name":"余额查询"},{"actionParam":"ZFB_LLCX","actionType":"out","name":"流量查询"},{"actionParam":"ZFB_HFCX","actionType":"out","name":"话费查询"}]},{"actionParam":"http://m.alipay.com","actionType":"link","name":"最新优惠"}]}&charset=GBK&method=alipay.mobile.public.menu.add&sign_type=RSA2&timestamp=2014-07-24 03:07:50&version=1.0`
	if got := SignContent(request, "sign"); got != wantRequest {
		t.Errorf("request sign content:\n got %s\nwant %s", got, wantRequest)
	}

	// The notification as it arrives (URL-encoded), parsed as the
	// endpoint parses it. The guide's string leaves out gmt_create, which
	// its notification carries: against its own rule ("every parameter
	// but sign and sign_type"), so the string below has it, in its place;
	// the rest is the guide's, byte for byte.
	notify, err := url.ParseQuery("total_amount=2.00&buyer_id=2088102116773037&body=%E5%A4%A7%E4%B9%90%E9%80%8F2.1&trade_no=2016071921001003030200089909&refund_fee=0.00&notify_time=2016-07-19+14%3A10%3A49&subject=%E5%A4%A7%E4%B9%90%E9%80%8F2.1&sign_type=RSA2&charset=utf-8&notify_type=trade_status_sync&out_trade_no=0719141034-6418&gmt_close=2016-07-19+14%3A10%3A46&gmt_payment=2016-07-19+14%3A10%3A47&trade_status=TRADE_SUCCESS&version=1.0&sign=kPbQIjX%2BxQc8F0%2FA6%2FAocELIjhhZnGbcBN6G4MM%2FHmfWL4ZiHM6fWl5NQhzXJusaklZ1LFuMo%2BlHQUELAYeugH8LYFvxnNajOvZhuxNFbN2LhF0l%2FKL8ANtj8oyPM4NN7Qft2kWJTDJUpQOzCzNnV9hDxh5AaT9FPqRS6ZKxnzM%3D&gmt_create=2016-07-19+14%3A10%3A44&app_id=2015102700040153&seller_id=2088102119685838&notify_id=4a91b7a78a503640467525113fb7d8bg8e")
	if err != nil {
		t.Fatal(err)
	}
	const wantNotify = `app_id=2015102700040153&body=大乐透2.1&buyer_id=2088102116773037&charset=utf-8&gmt_close=2016-07-19 14:10:46&gmt_create=2016-07-19 14:10:44&gmt_payment=2016-07-19 14:10:47&notify_id=4a91b7a78a503640467525113fb7d8bg8e&notify_time=2016-07-19 14:10:49&notify_type=trade_status_sync&out_trade_no=0719141034-6418&refund_fee=0.00&seller_id=2088102119685838&subject=大乐透2.1&total_amount=2.00&trade_no=2016071921001003030200089909&trade_status=TRADE_SUCCESS&version=1.0`
	if got := SignContent(notify, "sign", "sign_type"); got != wantNotify {
		t.Errorf("notification verify content:\n got %s\nwant %s", got, wantNotify)
	}
}
