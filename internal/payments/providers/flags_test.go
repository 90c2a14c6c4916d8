package providers_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"storefront/internal/payments"
	_ "storefront/internal/payments/alipay"
	_ "storefront/internal/payments/mock"
	"storefront/internal/payments/providers"
	_ "storefront/internal/payments/stripe"
	_ "storefront/internal/payments/wechatpay"
)

// build parses args into the registered providers' flags and builds what
// they switch on.
func build(t *testing.T, env providers.Env, args ...string) (payments.Config, error) {
	t.Helper()
	var cli struct {
		Providers providers.Flags `embed:""`
	}
	cli.Providers = providers.NewFlags()
	k, err := kong.New(&cli, kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) { t.Fatal("exit") }))
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := k.Parse(args)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cli.Providers.Providers(kctx, env)
	return payments.DefaultConfig().With(ps...), err
}

func names(c payments.Config) []string {
	var out []string
	for n := range c.Providers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// A provider is switched on by any of its flags or variables, even one
// given its default; then all it needs must be given. Nothing given,
// nothing is on but what --demo and the mock variable ask for.
func TestAProviderIsSwitchedOnByAnyOfItsFlags(t *testing.T) {
	shop := providers.Env{Currency: "CNY", PublicURL: "https://shop.example"}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		demo bool
		want []string // the providers, or
		err  string   // what the refusal names
	}{
		{name: "nothing", want: nil},
		{name: "demo", demo: true, want: []string{"mock"}},
		{name: "mock variable", env: map[string]string{"STOREFRONT_PAYMENT_PROVIDERS": "paypal:s:m:CNY"}, want: []string{"paypal"}},
		{name: "stripe", args: []string{"--stripe-secret-key", "sk_test", "--stripe-webhook-secret", "whsec_x"}, want: []string{"stripe"}},
		{name: "a default given", args: []string{"--stripe-base-url", "https://api.stripe.com"}, err: "--stripe-secret-key, --stripe-webhook-secret not set"},
		{name: "by its variable", env: map[string]string{"STOREFRONT_STRIPE_SECRET_KEY": "sk_test"}, err: "--stripe-webhook-secret not set"},
		{name: "alipay part", args: []string{"--alipay-app-id", "2021"}, err: "--alipay-private-key, --alipay-public-key not set"},
		{name: "a key file that is not there", args: []string{"--wechatpay-private-key", "/nonexistent/key.pem"}, err: "--wechatpay-private-key: open /nonexistent/key.pem"},
		{name: "two of one name", env: map[string]string{"STOREFRONT_PAYMENT_PROVIDERS": "stripe:s:m:CNY"},
			args: []string{"--stripe-secret-key", "sk_test", "--stripe-webhook-secret", "whsec_x"}, err: `"stripe" is configured twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			env := shop
			env.Demo = c.demo
			cfg, err := build(t, env, c.args...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one naming %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(cfg); !slices.Equal(got, c.want) {
				t.Errorf("providers %v, want %v", got, c.want)
			}
		})
	}
}

// Stripe's own webhook path is routed to it when it is on, and only then.
func TestAProvidersOwnRoutes(t *testing.T) {
	cfg, err := build(t, providers.Env{Currency: "CNY"}, "--stripe-secret-key", "sk_test", "--stripe-webhook-secret", "whsec_x")
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Routes(); len(r) != 1 || r["/payments/stripe/webhook"] != "stripe" {
		t.Errorf("routes %v", r)
	}
	cfg, err = build(t, providers.Env{Currency: "CNY", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Routes(); len(r) != 0 {
		t.Errorf("routes without Stripe: %v", r)
	}
}
