package payments

import (
	"fmt"
	"strings"
	"time"
)

// Provider is a configured payment provider.
type Provider struct {
	Name       string
	Secret     string
	MerchantID string
	Currency   string
}

// Config configures payments.
type Config struct {
	Providers map[string]Provider
	// Tolerance bounds how old (or how far in the future) a notification's
	// timestamp may be: a captured notification cannot be replayed later.
	Tolerance time.Duration
	// MaxBody bounds a notification body; larger ones are refused with 413.
	MaxBody int64
}

// DefaultConfig has no providers; see ParseProviders and MockProvider.
func DefaultConfig() Config {
	return Config{Providers: map[string]Provider{}, Tolerance: 5 * time.Minute, MaxBody: 64 << 10}
}

// MockProvider is the demo provider.
func MockProvider(secret string) Provider {
	if secret == "" {
		secret = "mock-secret"
	}
	return Provider{Name: "mock", Secret: secret, MerchantID: "mock-merchant", Currency: "CNY"}
}

// ParseProviders reads "name:secret:merchant:currency[,…]".
func ParseProviders(s string) (map[string]Provider, error) {
	out := map[string]Provider{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" || len(f[3]) != 3 {
			return nil, fmt.Errorf("payment provider %q: want name:secret:merchant:currency", part)
		}
		out[f[0]] = Provider{Name: f[0], Secret: f[1], MerchantID: f[2], Currency: strings.ToUpper(f[3])}
	}
	return out, nil
}
