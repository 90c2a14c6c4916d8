// Package auth verifies bearer tokens and carries the caller in the request
// context: the server's own HS256 tokens (Signer) and, beside them, those of
// one OpenID provider (an Issuer, package auth/oidc); Tokens routes each
// token to the one verifier that may accept it. Roles are checked by the
// resolvers, never trusted from anything but a verified token.
package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/vocab/errs"
)

// Role is what a token allows.
type Role string

const (
	Customer Role = "customer"
	Admin    Role = "admin"
)

// Principal is the verified caller; the zero value is anonymous.
type Principal struct {
	UserID string
	Role   Role
	// bad is why a presented token was refused: the request proceeds as
	// anonymous for public reads, and Require reports the reason.
	bad error
}

// IsAdmin reports a verified admin.
func (p Principal) IsAdmin() bool { return p.Role == Admin }

// Require returns the caller if it is authenticated with one of roles:
// otherwise errs.Unauthenticated (no token, or a bad or expired one) or
// errs.Forbidden (a verified token whose role does not allow this).
func Require(ctx context.Context, roles ...Role) (Principal, error) {
	p := FromContext(ctx)
	if p.UserID == "" {
		if errors.Is(p.bad, errs.Unavailable) {
			// Not the caller's fault: their provider's keys are not
			// loaded yet, and the same token may pass in a moment.
			return p, p.bad
		}
		if p.bad != nil {
			return p, fmt.Errorf("%w: %v", errs.Unauthenticated, p.bad)
		}
		return p, errs.Unauthenticated
	}
	for _, r := range roles {
		if p.Role == r {
			return p, nil
		}
	}
	return p, fmt.Errorf("%w: role %q may not do this", errs.Forbidden, p.Role)
}

type ctxKey struct{}

// FromContext returns the caller (anonymous when none).
func FromContext(ctx context.Context) Principal {
	p, _ := ctx.Value(ctxKey{}).(Principal)
	return p
}

// WithPrincipal puts p in ctx (tests and the middleware).
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// Signer issues and verifies tokens with one HS256 secret.
type Signer struct {
	secret   []byte
	verified *VerifiedCache
	now      func() time.Time
}

// NewSigner refuses short secrets: a guessable HMAC key forges any admin.
func NewSigner(secret string) (*Signer, error) {
	if len(secret) < 16 {
		return nil, errors.New("the JWT secret must be at least 16 characters")
	}
	s := &Signer{secret: []byte(secret), now: time.Now}
	s.verified = NewVerifiedCache(func() time.Time { return s.now() })
	return s, nil
}

type claims struct {
	Role Role `json:"role"`
	jwt.RegisteredClaims
}

// Issue signs a token for sub with role, valid for ttl.
func (s *Signer) Issue(sub string, role Role, ttl time.Duration) (string, error) {
	if sub == "" {
		return "", errors.New("token subject is empty")
	}
	if strings.HasPrefix(sub, ProviderPrefix) {
		return "", fmt.Errorf("token subjects starting with %q are reserved for OpenID provider users", ProviderPrefix)
	}
	if role != Customer && role != Admin {
		return "", fmt.Errorf("unknown role %q (want customer or admin)", role)
	}
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{Role: role, RegisteredClaims: jwt.RegisteredClaims{
		Subject: sub, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}})
	return t.SignedString(s.secret)
}

// Verify checks signature, algorithm (pinned to HS256, so alg=none and
// RS/HS confusion are refused), expiry (required) and the claims' shape.
// A token verified before is answered from the cache while it has not
// expired.
func (s *Signer) Verify(token string) (Principal, error) {
	if p, ok := s.verified.Get(token); ok {
		return p, nil
	}
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now))
	if err != nil {
		return Principal{}, err
	}
	if c.Subject == "" || (c.Role != Customer && c.Role != Admin) {
		return Principal{}, errors.New("token lacks a subject or a known role")
	}
	if strings.HasPrefix(c.Subject, ProviderPrefix) {
		// An HS256 subject never equals a provider user's id (ProviderUserID).
		return Principal{}, fmt.Errorf("token subject starts with %q, reserved for OpenID provider users", ProviderPrefix)
	}
	p := Principal{UserID: c.Subject, Role: c.Role}
	s.verified.Add(token, p, c.ExpiresAt.Time)
	return p, nil
}
