// Package auth verifies bearer tokens (HS256 JWT) and carries the caller in
// the request context. Roles are checked by the resolvers, never trusted from
// anything but a verified token.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"storefront/internal/vocab/errs"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
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
	secret []byte
	// verified remembers tokens that passed Verify, until their expiry:
	// a client sends the same token with every request, and parsing and
	// checking it again was a visible share of each checkout request's CPU
	// (docs/benchmarks.md). Keyed by the whole token, signature included,
	// so only the very string that was verified hits.
	verified *lru.Cache[string, verifiedToken]
	now      func() time.Time
}

type verifiedToken struct {
	p   Principal
	exp time.Time
}

// verifiedTokens bounds the cache: a few MiB at most.
const verifiedTokens = 10_000

// NewSigner refuses short secrets: a guessable HMAC key forges any admin.
func NewSigner(secret string) (*Signer, error) {
	if len(secret) < 16 {
		return nil, errors.New("the JWT secret must be at least 16 characters")
	}
	cache, err := lru.New[string, verifiedToken](verifiedTokens)
	if err != nil {
		return nil, err
	}
	return &Signer{secret: []byte(secret), verified: cache, now: time.Now}, nil
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
	if v, ok := s.verified.Get(token); ok {
		if s.now().Before(v.exp) {
			return v.p, nil
		}
		s.verified.Remove(token)
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
	p := Principal{UserID: c.Subject, Role: c.Role}
	s.verified.Add(token, verifiedToken{p: p, exp: c.ExpiresAt.Time})
	return p, nil
}

// Middleware reads "Authorization: Bearer …". It never rejects on its own:
// public reads work without a token, and protected operations ask Require.
func (s *Signer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		if h == "" {
			next.ServeHTTP(w, r)
			return
		}
		var p Principal
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			p.bad = errors.New("authorization header is not a bearer token")
		} else if v, err := s.Verify(strings.TrimSpace(tok)); err != nil {
			p.bad = err
		} else {
			p = v
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
