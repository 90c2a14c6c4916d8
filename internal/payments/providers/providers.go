// Package providers is where payment providers register themselves, as
// database/sql drivers do: a provider package calls Register in its init
// with its settings, a struct whose fields carry their flags, environment
// variables, defaults and help (kong's tags), and the binary imports the
// package for that side effect (cmd/storefront/providers.go). Adding a
// provider is its package and that one import line.
package providers

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"storefront/internal/payments"
)

// Settings are one provider's parsed flags.
type Settings interface {
	// Build returns the providers these settings switch on (none: off),
	// each validated: a provider switched on with part of what it needs
	// would take payments it cannot verify or refund.
	Build(env Env) ([]payments.Provider, error)
}

// Env is what a provider's Build is told besides its own settings.
type Env struct {
	// Given: any of the provider's own flags or variables was given. A
	// provider is switched on by giving any of them; then all it needs
	// must be given.
	Given bool
	// Demo: serve --demo, which pays with the mock provider.
	Demo bool
	// PublicURL is the shop's public base URL ("": not given).
	PublicURL string
	// Currency is the shop's (ISO 4217): the orders' currency.
	Currency string
}

// URL is path under the shop's public URL ("" without one).
func (e Env) URL(path string) string {
	if e.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(e.PublicURL, "/") + path
}

// NotifyURL is where provider is told to notify: <public-url>/payments/<provider>/notify.
func (e Env) NotifyURL(provider string) string { return e.URL("/payments/" + provider + "/notify") }

var (
	mu       sync.Mutex
	registry = map[string]func() Settings{}
)

// Register makes a provider's settings known by its name; settings
// returns them fresh, unset: a pointer to a struct of kong-tagged fields
// whose flags are named for the provider. It panics on a name registered
// twice, as sql.Register does: two packages would claim one flag set.
func Register(name string, settings func() Settings) {
	mu.Lock()
	defer mu.Unlock()
	if settings == nil {
		panic("providers: Register of " + name + " without settings")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("providers: %q registered twice", name))
	}
	registry[name] = settings
}

// Names are the registered providers' names, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func settingsOf(name string) Settings {
	mu.Lock()
	defer mu.Unlock()
	return registry[name]()
}
