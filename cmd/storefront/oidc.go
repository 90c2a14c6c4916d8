package main

import (
	"errors"
	"time"

	"storefront/internal/platform/auth/oidc"
)

// oidcFlags are serve's OpenID provider (docs/auth.md): with
// --oidc-issuer, the provider's RS256/ES256 tokens are accepted beside the
// server's own HS256 ones.
type oidcFlags struct {
	Issuer      string        `name:"oidc-issuer" env:"STOREFRONT_OIDC_ISSUER" help:"an OpenID provider whose tokens are accepted, its issuer URL exactly as its tokens' iss says it; keys by discovery"`
	Audience    string        `name:"oidc-audience" env:"STOREFRONT_OIDC_AUDIENCE" help:"the aud the provider's tokens must carry for this shop; required with --oidc-issuer"`
	RoleClaim   string        `name:"oidc-role-claim" env:"STOREFRONT_OIDC_ROLE_CLAIM" default:"${oidc_role_claim}" help:"the claim holding a token's roles, or a dotted path to it such as realm_access.roles"`
	AdminRole   string        `name:"oidc-admin-role" env:"STOREFRONT_OIDC_ADMIN_ROLE" default:"${oidc_admin_role}" help:"the role that makes a provider's token an admin's; any other valid token is a customer's"`
	JWKSRefresh time.Duration `name:"oidc-jwks-refresh" env:"STOREFRONT_OIDC_JWKS_REFRESH" default:"${oidc_jwks_refresh}" help:"the least time between two fetches of the provider's keys: a token naming an unknown key fetches them again at most this often"`
}

func (o *oidcFlags) config() oidc.Config {
	return oidc.Config{Issuer: o.Issuer, Audience: o.Audience, RoleClaim: o.RoleClaim, AdminRole: o.AdminRole, JWKSRefresh: o.JWKSRefresh}
}

// Validate checks the provider's flags when an issuer is given, and that
// none is given without one.
func (o *oidcFlags) Validate() error {
	if o.Issuer == "" {
		if o.Audience != "" {
			return errors.New("--oidc-audience needs --oidc-issuer")
		}
		return nil
	}
	if o.JWKSRefresh < time.Second {
		return errors.New("--oidc-jwks-refresh must be at least 1s")
	}
	if o.JWKSRefresh > oidc.DefaultKeysMaxAge {
		return errors.New("--oidc-jwks-refresh must be at most 15m: the keys are fetched again at that age")
	}
	return o.config().Validate()
}

// open starts loading the provider's keys (nil without --oidc-issuer).
func (o *oidcFlags) open() (*oidc.Provider, error) {
	if o.Issuer == "" {
		return nil, nil
	}
	return oidc.New(o.config())
}
