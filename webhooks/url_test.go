package webhooks

import (
	"context"
	"errors"
	"testing"

	"storefront/errs"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://93.184.215.14/hook", false, true},
		{"http://93.184.215.14:8080/hook?x=1", false, true},
		{"https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook", false, true},
		{"ftp://93.184.215.14/hook", false, false},
		{"93.184.215.14/hook", false, false},
		{"https:///hook", false, false},
		{"https://user:pw@93.184.215.14/hook", false, false},
		{"http://127.0.0.1:9000/hook", false, false},
		{"http://localhost:9000/hook", false, false},
		{"http://[::1]/hook", false, false},
		{"http://10.1.2.3/hook", false, false},
		{"http://172.16.0.9/hook", false, false},
		{"http://192.168.1.1/hook", false, false},
		{"http://169.254.169.254/latest/meta-data", false, false}, // link-local: a cloud's metadata service
		{"http://[fe80::1]/hook", false, false},
		{"http://[fd00::1]/hook", false, false},
		{"http://0.0.0.0/hook", false, false},
		{"http://100.64.0.1/hook", false, false},
		{"http://[::ffff:127.0.0.1]/hook", false, false},
		{"http://127.0.0.1:9000/hook", true, true},
		{"ftp://127.0.0.1/hook", true, false},
	} {
		err := checkURL(context.Background(), tc.url, tc.allowPrivate)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errs.InvalidInput)) {
			t.Errorf("checkURL(%q, allowPrivate=%v) = %v; want ok=%v (else INVALID_INPUT)", tc.url, tc.allowPrivate, err, tc.ok)
		}
	}
}

func TestCheckEvents(t *testing.T) {
	if got, err := checkEvents([]string{"OrderPaid", "OrderClosed", "OrderPaid"}); err != nil || got != "OrderPaid,OrderClosed" {
		t.Errorf("checkEvents = %q, %v", got, err)
	}
	for _, bad := range [][]string{nil, {}, {"OrderShipped"}, {"OrderPaid", ""}} {
		if _, err := checkEvents(bad); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("checkEvents(%q) = %v, want INVALID_INPUT", bad, err)
		}
	}
}
