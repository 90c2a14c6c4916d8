package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/vocab/errs"
)

// Issuer verifies the tokens of one OpenID provider (package auth/oidc).
type Issuer interface {
	// Issuer is the exact iss its tokens carry.
	Issuer() string
	// Verify checks a token that names this issuer: its algorithm, key,
	// signature, audience and times. It answers ErrProviderUnavailable
	// while the provider's keys have never loaded.
	Verify(ctx context.Context, token string) (Principal, error)
	// Ready is nil once the provider's keys have loaded, and why not before.
	Ready() error
}

// ErrProviderUnavailable answers an OpenID provider's token while the
// provider's keys have not loaded yet (it was unreachable since the start):
// UNAVAILABLE, as the same token may pass once they have.
var ErrProviderUnavailable = errs.New(errs.Unavailable, "the identity provider's keys are not loaded yet; retry later")

// ProviderPrefix starts every provider user's id; the server's own tokens
// may not use it as a subject.
const ProviderPrefix = "oidc:"

// ProviderUserID is the user id of subject sub of issuer iss: the same
// for every token of that user, different for each (iss, sub) pair and never
// an HS256 subject (ProviderPrefix). A digest, because owner columns hold 64
// bytes and an issuer URL with a subject is often longer; iss can hold no
// NUL (it equals the configured issuer), so the pair is unambiguous.
func ProviderUserID(iss, sub string) string {
	d := sha256.Sum256([]byte(iss + "\x00" + sub))
	return ProviderPrefix + base64.RawURLEncoding.EncodeToString(d[:])
}

// Tokens routes each bearer token to the one verifier that may accept it,
// by what it says of itself before any key is used: a token without iss and
// with alg HS256 is the server's own (Signer); a token whose iss is the
// configured provider's goes to that provider (which accepts RS256 and
// ES256 with a kid of its key set); anything else is refused. Keys are never
// tried one after another until one fits: that is how an HS256 token
// "signed" with a provider's public key would pass.
type Tokens struct {
	own      *Signer
	provider Issuer // nil: no OpenID provider configured
}

// NewTokens routes to own and, when not nil, provider.
func NewTokens(own *Signer, provider Issuer) *Tokens {
	return &Tokens{own: own, provider: provider}
}

// Verify returns the caller a token names, or why it is refused.
func (t *Tokens) Verify(ctx context.Context, token string) (Principal, error) {
	if t.own != nil {
		// Most requests carry an own token verified before: answer them
		// before parsing anything.
		if p, ok := t.own.verified.Get(token); ok {
			return p, nil
		}
	}
	var c jwt.RegisteredClaims
	head, _, err := jwt.NewParser().ParseUnverified(token, &c)
	if err != nil {
		return Principal{}, fmt.Errorf("malformed token: %w", err)
	}
	alg, _ := head.Header["alg"].(string)
	switch {
	case c.Issuer == "":
		if alg != jwt.SigningMethodHS256.Alg() {
			return Principal{}, fmt.Errorf("a token without an issuer must be this server's own (HS256), not %q", alg)
		}
		if t.own == nil {
			return Principal{}, errors.New("this server verifies no HS256 tokens")
		}
		return t.own.Verify(token)
	case t.provider != nil && c.Issuer == t.provider.Issuer():
		return t.provider.Verify(ctx, token)
	default:
		return Principal{}, fmt.Errorf("tokens of issuer %q are not accepted here", c.Issuer)
	}
}

// Middleware reads "Authorization: Bearer …". It never rejects on its own:
// public reads work without a token, and protected operations ask Require.
func (t *Tokens) Middleware(next http.Handler) http.Handler {
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
		} else if v, err := t.Verify(r.Context(), strings.TrimSpace(tok)); err != nil {
			p.bad = err
		} else {
			p = v
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
