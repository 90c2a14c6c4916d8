// Package oidctest is a stand-in OpenID provider for tests, over real HTTP:
// discovery at /.well-known/openid-configuration and a JWK set at /jwks, as
// OpenID Connect Discovery 1.0 and RFC 7517 describe them, and tokens signed
// with go-jose as a provider signs them (RS256 and ES256, a kid in the
// header). It counts key-set fetches, rotates and withdraws keys, and can be
// taken down and brought back.
package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is one signing key of the provider (or a foreign one).
type Key struct {
	ID   string
	Alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

// Provider is the stand-in; its URL is the issuer.
type Provider struct {
	srv *httptest.Server

	mu        sync.Mutex
	published []Key // in the key set, the first signs by default
	down      bool

	fetches atomic.Int64 // key-set requests answered with keys
	tries   atomic.Int64 // key-set requests, answered or refused while down
}

// New starts a provider with one RS256 and one ES256 key; it stops at the
// end of the test.
func New(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{published: []Key{NewKey(t, jose.RS256), NewKey(t, jose.ES256)}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// NewKey makes a key of alg with a random kid; it is the provider's only
// once Publish is called with it.
func NewKey(t testing.TB, alg jose.SignatureAlgorithm) Key {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("oidctest: no keys of %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return Key{ID: RandomKid(), Alg: alg, priv: priv}
}

// RandomKid is a kid no provider has.
func RandomKid() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Issuer is the provider's issuer URL (http on 127.0.0.1).
func (p *Provider) Issuer() string { return p.srv.URL }

// Keys are the published keys; the first signs Token's tokens.
func (p *Provider) Keys() []Key {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Key(nil), p.published...)
}

// Rotate publishes a new RS256 key in front of the others (it signs from
// now on) and returns it; withdraw drops every older key from the set.
func (p *Provider) Rotate(t testing.TB, withdraw bool) Key {
	k := NewKey(t, jose.RS256)
	p.mu.Lock()
	defer p.mu.Unlock()
	if withdraw {
		p.published = nil
	}
	p.published = append([]Key{k}, p.published...)
	return k
}

// SetDown makes discovery and the key set answer 503 (true) or serve again.
func (p *Provider) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// KeySetFetches is how many times the key set was served.
func (p *Provider) KeySetFetches() int64 { return p.fetches.Load() }

// KeySetTries is how many times the key set was asked for, also while the
// provider was down.
func (p *Provider) KeySetTries() int64 { return p.tries.Load() }

// Claims are a valid token's claims for sub and aud, valid for an hour from
// now; extra claims are added or replace these.
func (p *Provider) Claims(sub, aud string, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": p.Issuer(), "sub": sub, "aud": aud, "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// Token signs claims with the first published key.
func (p *Provider) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, p.Keys()[0], claims)
}

// Sign signs claims with k, naming k.ID as the kid.
func Sign(t testing.TB, k Key, claims map[string]any) string {
	t.Helper()
	return SignAs(t, k, k.ID, claims)
}

// SignAs signs claims with k but names kid in the header.
func SignAs(t testing.TB, k Key, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// PublicPEM is k's public key as PEM, the bytes an attacker would use as
// an HMAC secret in an alg-confusion forgery.
func (k Key) PublicPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func (p *Provider) unavailable(w http.ResponseWriter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		http.Error(w, "provider down", http.StatusServiceUnavailable)
	}
	return p.down
}

func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	if p.unavailable(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                p.Issuer(),
		"jwks_uri":                              p.Issuer() + "/jwks",
		"authorization_endpoint":                p.Issuer() + "/authorize",
		"token_endpoint":                        p.Issuer() + "/token",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	p.tries.Add(1)
	if p.unavailable(w) {
		return
	}
	p.fetches.Add(1)
	var set jose.JSONWebKeySet
	for _, k := range p.Keys() {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.ID, Algorithm: string(k.Alg), Use: "sig"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}
