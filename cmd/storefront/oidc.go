package main

import (
	"errors"
	"flag"
	"time"

	"storefront/internal/platform/auth/oidc"
)

// oidcFlags registers serve's OpenID provider (docs/auth.md): with
// --oidc-issuer, the provider's RS256/ES256 tokens are accepted beside the
// server's own HS256 ones.
func oidcFlags(fs *flag.FlagSet, c *config) {
	o := &c.OIDC
	fs.StringVar(&o.Issuer, "oidc-issuer", env("OIDC_ISSUER", ""),
		"an OpenID provider whose tokens are accepted, its issuer URL exactly as its tokens' iss says it; keys by discovery (STOREFRONT_OIDC_ISSUER)")
	fs.StringVar(&o.Audience, "oidc-audience", env("OIDC_AUDIENCE", ""),
		"the aud the provider's tokens must carry for this shop; required with --oidc-issuer (STOREFRONT_OIDC_AUDIENCE)")
	fs.StringVar(&o.RoleClaim, "oidc-role-claim", env("OIDC_ROLE_CLAIM", oidc.DefaultRoleClaim),
		"the claim holding a token's roles, or a dotted path to it such as realm_access.roles (STOREFRONT_OIDC_ROLE_CLAIM)")
	fs.StringVar(&o.AdminRole, "oidc-admin-role", env("OIDC_ADMIN_ROLE", oidc.DefaultAdminRole),
		"the role that makes a provider's token an admin's; any other valid token is a customer's (STOREFRONT_OIDC_ADMIN_ROLE)")
	fs.DurationVar(&o.JWKSRefresh, "oidc-jwks-refresh", envDuration("OIDC_JWKS_REFRESH", oidc.DefaultJWKSRefresh),
		"the least time between two fetches of the provider's keys: a token naming an unknown key fetches them again at most this often (STOREFRONT_OIDC_JWKS_REFRESH)")
}

// validOIDC checks the provider's flags when an issuer is given, and that
// none is given without one.
func validOIDC(c *config) error {
	o := c.OIDC
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
	return o.Validate()
}

// openOIDC starts loading the provider's keys (nil without --oidc-issuer).
func openOIDC(c *config) (*oidc.Provider, error) {
	if c.OIDC.Issuer == "" {
		return nil, nil
	}
	return oidc.New(c.OIDC)
}
