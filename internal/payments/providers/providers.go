// Package providers is where the payment providers are registered: adding
// one is a package under internal/payments and a line in Build.
package providers

import (
	"storefront/internal/payments"
	"storefront/internal/payments/alipay"
	"storefront/internal/payments/stripe"
	"storefront/internal/payments/wechatpay"
)

// Settings are the configured providers' settings (nil: not configured).
type Settings struct {
	WeChatPay *wechatpay.Config
	Alipay    *alipay.Config
	Stripe    *stripe.Config
}

// Build validates every configured provider and adds it to cfg.
func Build(cfg payments.Config, s Settings) (payments.Config, error) {
	if c := s.WeChatPay; c != nil {
		if err := c.Validate(); err != nil {
			return cfg, err
		}
		cfg = cfg.With(wechatpay.New(*c))
	}
	if c := s.Alipay; c != nil {
		if err := c.Validate(); err != nil {
			return cfg, err
		}
		cfg = cfg.With(alipay.New(*c))
	}
	if c := s.Stripe; c != nil {
		if err := c.Validate(); err != nil {
			return cfg, err
		}
		cfg = cfg.With(stripe.New(*c))
	}
	return cfg, nil
}
