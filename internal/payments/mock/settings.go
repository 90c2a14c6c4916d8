package mock

import (
	"storefront/internal/payments"
	"storefront/internal/payments/providers"
)

func init() { providers.Register("mock", func() providers.Settings { return &Settings{} }) }

// Settings are the mock providers' settings: variables for tests and the
// demo, hidden from --help (a shop does not take mock payments).
type Settings struct {
	Providers string `name:"payment-providers" env:"STOREFRONT_PAYMENT_PROVIDERS" hidden:"" help:"mock providers: name:secret:merchant:currency[,…]"`
	Secret    string `name:"mock-payment-secret" env:"STOREFRONT_MOCK_PAYMENT_SECRET" hidden:"" help:"the demo's mock provider's secret (default mock-secret)"`
}

// Build returns the listed mock providers and, with --demo, the demo's
// "mock" unless the list names one.
func (s *Settings) Build(env providers.Env) ([]payments.Provider, error) {
	ps, err := ParseProviders(s.Providers)
	if err != nil {
		return nil, err
	}
	if !env.Demo {
		return ps, nil
	}
	for _, p := range ps {
		if p.Name() == "mock" {
			return ps, nil
		}
	}
	return append(ps, Demo(s.Secret)), nil
}
