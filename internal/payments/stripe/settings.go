package stripe

import (
	"storefront/internal/payments"
	"storefront/internal/payments/providers"
)

func init() { providers.Register("stripe", func() providers.Settings { return &Settings{} }) }

// Settings are Stripe's flags (docs/payments.md).
type Settings struct {
	SecretKey     string `name:"stripe-secret-key" env:"STOREFRONT_STRIPE_SECRET_KEY" help:"Stripe secret key (sk_…)"`
	WebhookSecret string `name:"stripe-webhook-secret" env:"STOREFRONT_STRIPE_WEBHOOK_SECRET" help:"signing secret of the webhook endpoint <public-url>/payments/stripe/webhook (whsec_…)"`
	BaseURL       string `name:"stripe-base-url" env:"STOREFRONT_STRIPE_BASE_URL" default:"https://api.stripe.com" help:"Stripe's API"`
}

// Build validates: Stripe, in the shop's currency, when any of its flags
// was given.
func (s *Settings) Build(env providers.Env) ([]payments.Provider, error) {
	if !env.Given {
		return nil, nil
	}
	c := Config{SecretKey: s.SecretKey, WebhookSecret: s.WebhookSecret, BaseURL: s.BaseURL, Currency: env.Currency}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return []payments.Provider{New(c)}, nil
}
