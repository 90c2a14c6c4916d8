package alipay

import (
	"storefront/internal/payments"
	"storefront/internal/payments/providers"
)

func init() { providers.Register("alipay", func() providers.Settings { return &Settings{} }) }

// Settings are Alipay's flags (docs/payments.md).
type Settings struct {
	AppID      string `name:"alipay-app-id" env:"STOREFRONT_ALIPAY_APP_ID" help:"Alipay app id"`
	PrivateKey string `name:"alipay-private-key" env:"STOREFRONT_ALIPAY_PRIVATE_KEY" placeholder:"FILE" help:"FILE: the app's private key, PEM (PKCS #1 or #8)"`
	PublicKey  string `name:"alipay-public-key" env:"STOREFRONT_ALIPAY_PUBLIC_KEY" placeholder:"FILE" help:"FILE: Alipay's public key, PEM"`
	Gateway    string `name:"alipay-gateway" env:"STOREFRONT_ALIPAY_GATEWAY" default:"https://openapi.alipay.com/gateway.do" help:"Alipay's gateway"`
}

// Build reads the key files and validates: Alipay when any of its flags
// was given. The buyer comes back to the shop's page after paying.
func (s *Settings) Build(env providers.Env) ([]payments.Provider, error) {
	if !env.Given {
		return nil, nil
	}
	c := Config{AppID: s.AppID, Gateway: s.Gateway, NotifyURL: env.NotifyURL("alipay"), ReturnURL: env.URL("/shop/")}
	var err error
	if c.PrivateKey, err = providers.PrivateKeyFile("--alipay-private-key", s.PrivateKey); err != nil {
		return nil, err
	}
	if c.PublicKey, err = providers.PublicKeyFile("--alipay-public-key", s.PublicKey); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return []payments.Provider{New(c)}, nil
}
