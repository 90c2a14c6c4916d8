// Package oidc verifies the tokens of one OpenID Connect provider (Keycloak,
// Auth0, Cognito, Zitadel, …) beside the server's own HS256 tokens: keys
// found by discovery and fetched from the provider's jwks_uri, RS256 and
// ES256 only, iss, aud, exp, nbf and iat checked, and the provider's roles
// mapped to the two the API knows. It implements auth.Issuer; auth.Tokens
// routes the provider's tokens here (docs/auth.md).
package oidc

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Config is one provider's settings (serve's --oidc-* flags).
type Config struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' iss
	// says it (Auth0's ends with a slash); discovery is at
	// Issuer/.well-known/openid-configuration.
	Issuer string
	// Audience must be one of a token's aud.
	Audience string
	// RoleClaim is where a token lists its roles: a claim name, or a
	// dotted path into nested claims (Keycloak's realm_access.roles).
	RoleClaim string
	// AdminRole in RoleClaim makes the token an admin's; any other valid
	// token is a customer's.
	AdminRole string
	// JWKSRefresh is the least time between two fetches of the key set: a
	// token naming an unknown kid fetches it again at most this often.
	JWKSRefresh time.Duration
	// KeysMaxAge: the key set is fetched again when it is this old, even if
	// no token names a new kid, so that a key the provider withdrew stops
	// verifying.
	KeysMaxAge time.Duration
	// Leeway is how far a token's nbf and iat may lie ahead of this
	// server's clock (the provider's clock runs a little ahead).
	Leeway time.Duration
	// Client fetches discovery and keys (nil: one with a 10 s timeout).
	Client *http.Client
	// Now is the clock tokens and fetch intervals are measured by (nil:
	// time.Now).
	Now func() time.Time
}

// The defaults of Config's fields.
const (
	DefaultRoleClaim   = "roles"
	DefaultAdminRole   = "admin"
	DefaultJWKSRefresh = time.Minute
	DefaultKeysMaxAge  = 15 * time.Minute
	DefaultLeeway      = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.RoleClaim == "" {
		c.RoleClaim = DefaultRoleClaim
	}
	if c.AdminRole == "" {
		c.AdminRole = DefaultAdminRole
	}
	if c.JWKSRefresh == 0 {
		c.JWKSRefresh = DefaultJWKSRefresh
	}
	if c.KeysMaxAge == 0 {
		c.KeysMaxAge = DefaultKeysMaxAge
	}
	if c.Leeway == 0 {
		c.Leeway = DefaultLeeway
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports what is wrong with c, defaults applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := checkURL("issuer", c.Issuer); err != nil {
		return err
	}
	if u, _ := url.Parse(c.Issuer); u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("the OpenID issuer %q may have no query or fragment", c.Issuer)
	}
	if c.Audience == "" {
		return errors.New("an OpenID issuer needs an audience: the aud its tokens carry for this shop (--oidc-audience)")
	}
	if c.JWKSRefresh < 0 || c.KeysMaxAge < c.JWKSRefresh || c.Leeway < 0 {
		return errors.New("the key refresh interval must be positive and at most the keys' maximum age, and the leeway not negative")
	}
	return nil
}

// checkURL refuses what is not an absolute https URL: keys fetched in the
// clear could be swapped on the way and forge any admin. Plain http is
// allowed to a loopback address only (a provider on the same machine).
func checkURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the OpenID %s %q is not an absolute URL", what, s)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return fmt.Errorf("the OpenID %s %q must be an https URL (http only on a loopback address)", what, s)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
