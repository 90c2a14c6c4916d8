package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"storefront/internal/demo"
	"storefront/internal/payments"
	"storefront/internal/payments/providers"
	"storefront/internal/platform/auth"
	"storefront/internal/testsupport/nettest"
	"storefront/internal/vocab/enums"
)

// fakepay is a provider this file alone adds, as a provider package would:
// its settings and flags, its own route and its start payload. Nothing
// outside this file knows it.
func init() { providers.Register("fakepay", func() providers.Settings { return &fakeSettings{} }) }

type fakeSettings struct {
	Secret string `name:"fakepay-secret" env:"STOREFRONT_FAKEPAY_SECRET" help:"the fake provider's signing secret"`
	Page   string `name:"fakepay-page" env:"STOREFRONT_FAKEPAY_PAGE" default:"https://pay.example/checkout" help:"the fake provider's pay page"`
}

func (s *fakeSettings) Build(env providers.Env) ([]payments.Provider, error) {
	if !env.Given {
		return nil, nil
	}
	if s.Secret == "" {
		return nil, errors.New("fakepay: --fakepay-secret not set")
	}
	return []payments.Provider{&fakeProvider{settings: *s, currency: env.Currency}}, nil
}

type fakeProvider struct {
	settings fakeSettings
	currency string
}

func (p *fakeProvider) Name() string     { return "fakepay" }
func (p *fakeProvider) Merchant() string { return "" }
func (p *fakeProvider) Currency() string { return p.currency }
func (p *fakeProvider) Routes() []string { return []string{"/payments/fakepay/hook"} }
func (p *fakeProvider) Reply(ok bool, _ string) (string, []byte) {
	if ok {
		return "text/plain", []byte("fake ok")
	}
	return "text/plain", []byte("fake fail")
}

// Verify takes a notification signed with the secret as one this shop
// does not act on: acknowledged, nothing written.
func (p *fakeProvider) Verify(in payments.Incoming) (payments.Notice, error) {
	if in.Header.Get("X-Fake") != p.settings.Secret {
		return payments.Notice{}, payments.ErrBadSignature
	}
	return payments.Notice{EventID: string(in.Body), Ignore: true}, nil
}

func (p *fakeProvider) Start(_ context.Context, o payments.StartOrder) (payments.Started, error) {
	return payments.Started{Page: map[string]string{payments.PageRedirectURL: p.settings.Page + "?order=" + o.OrderSn}}, nil
}

func (p *fakeProvider) Query(context.Context, payments.StartedPayment) (payments.Queried, error) {
	return payments.Queried{Status: enums.PaymentPending}, nil
}

func (p *fakeProvider) Refund(context.Context, payments.RefundRequest) (payments.RefundResult, error) {
	return payments.RefundResult{Status: enums.RefundPending}, nil
}

// A provider registered by its package alone: its flags are in serve's
// --help, giving one switches it on and then it needs all it needs, its
// route is served, and startPayment answers what its Start filled in.
func TestAProviderRegistersItself(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var help bytes.Buffer
	if err := runWith(ctx, []string{"serve", "--help"}, &help); !errors.Is(err, errHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	for _, want := range []string{"--fakepay-secret=STRING", "$STOREFRONT_FAKEPAY_SECRET", `--fakepay-page="https://pay.example/checkout"`} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("serve --help has no %s:\n%s", want, help.String())
		}
	}
	const secret = "test-secret-0123456789abcdef"
	t.Setenv("STOREFRONT_JWT_SECRET", secret)
	db := "sqlite:" + t.TempDir() + "/fakepay.db"
	// Refused before anything opens or listens; the context is done, so a
	// serve that did not refuse returns at once instead of serving.
	stopped, stop := context.WithCancel(ctx)
	stop()
	err := runWith(stopped, []string{"serve", "--demo", "--db", db, "--addr", nettest.FreeAddr(t), "--fakepay-page", "https://other.example"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--fakepay-secret") {
		t.Fatalf("serve with part of fakepay's settings: %v", err)
	}

	addr := nettest.FreeAddr(t)
	done := make(chan error, 1)
	go func() {
		done <- runWith(ctx, []string{"serve", "--demo", "--db", db, "--addr", addr, "--fakepay-secret", "s3"}, io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, done)

	signer, err := auth.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	token, err := signer.Issue(demo.Customer, auth.Customer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var goods struct {
		Goods struct {
			Skus []struct {
				ID    string
				Stock int
			}
		}
	}
	graphql(t, base, token, `{ goods(id: 1) { skus { id stock } } }`, nil, &goods)
	item := ""
	for _, k := range goods.Goods.Skus {
		if k.Stock > 0 {
			item = k.ID
		}
	}
	var placed struct{ PlaceOrder struct{ OrderSn string } }
	graphql(t, base, token, `mutation($items: [OrderItemInput!]!) { placeOrder(input: {items: $items}) { orderSn } }`,
		map[string]any{"items": []map[string]any{{"itemId": item, "quantity": 1}}}, &placed)
	var started struct {
		StartPayment struct {
			Provider, OutTradeNo              string
			QrCode, RedirectURL, ClientSecret *string
		}
	}
	sn := placed.PlaceOrder.OrderSn
	graphql(t, base, token, `mutation($sn: String!) { startPayment(orderSn: $sn, provider: "fakepay") { provider outTradeNo qrCode redirectUrl clientSecret } }`,
		map[string]any{"sn": sn}, &started)
	st := started.StartPayment
	if st.Provider != "fakepay" || st.OutTradeNo != sn || st.RedirectURL == nil || *st.RedirectURL != "https://pay.example/checkout?order="+sn ||
		st.QrCode != nil || st.ClientSecret != nil {
		t.Errorf("startPayment: %+v (redirectUrl %v)", st, st.RedirectURL)
	}

	for _, c := range []struct {
		sig    string
		status int
		body   string
	}{{"s3", 200, "fake ok"}, {"wrong", 401, "fake fail"}} {
		req, _ := http.NewRequest("POST", base+"/payments/fakepay/hook", strings.NewReader("evt-1"))
		req.Header.Set("X-Fake", c.sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.body {
			t.Errorf("POST /payments/fakepay/hook signed %q: %d %q, want %d %q", c.sig, resp.StatusCode, b, c.status, c.body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// waitReady polls /readyz until serve answers 200, failing at once when
// serve returns.
func waitReady(t *testing.T, base string, done <-chan error) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned before it was ready: %v", err)
		case <-deadline:
			t.Fatal("serve was not ready in 60s")
		case <-tick.C:
		}
	}
}

// graphql posts one operation and decodes its data into out, failing on
// any error.
func graphql(t *testing.T, base, token, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest("POST", base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("%s: %v", query, r.Errors)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		t.Fatal(err)
	}
}
