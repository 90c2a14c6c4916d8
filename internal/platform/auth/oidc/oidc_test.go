package oidc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/auth/oidc/oidctest"
	"storefront/internal/vocab/errs"
)

const audience = "storefront"

// clock is a Config.Now that tests move forward by hand: the key-set
// interval is a minute, as in production, and no test waits one out.
type clock struct{ ahead atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *clock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }

// setup starts a stand-in provider and a verifier of its tokens with its
// keys loaded, routed through auth.Tokens beside an HS256 signer.
func setup(t *testing.T, cfg oidc.Config) (*oidctest.Provider, *oidc.Provider, *auth.Tokens, *clock) {
	t.Helper()
	op := oidctest.New(t)
	c := &clock{}
	cfg.Issuer, cfg.Audience, cfg.Now = op.Issuer(), audience, c.Now
	p := start(t, cfg)
	loaded(t, p)
	own, err := auth.NewSigner("oidc-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	return op, p, auth.NewTokens(own, p), c
}

func start(t *testing.T, cfg oidc.Config) *oidc.Provider {
	t.Helper()
	p, err := oidc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// loaded waits until p's keys have loaded.
func loaded(t *testing.T, p *oidc.Provider) {
	t.Helper()
	select {
	case <-p.Loaded():
	case <-time.After(15 * time.Second):
		t.Fatalf("the keys never loaded: %v", p.Ready())
	}
	if err := p.Ready(); err != nil {
		t.Fatalf("Ready after loading = %v", err)
	}
}

func TestAdminAndCustomer(t *testing.T) {
	op, _, tokens, _ := setup(t, oidc.Config{RoleClaim: "realm_access.roles"})
	ctx := context.Background()
	admin := op.Token(t, op.Claims("alice", audience, map[string]any{"realm_access": map[string]any{"roles": []string{"offline_access", "admin"}}}))
	customer := op.Token(t, op.Claims("bob", audience, map[string]any{"realm_access": map[string]any{"roles": []string{"offline_access"}}}))
	es256 := oidctest.Sign(t, op.Keys()[1], op.Claims("carol", audience, nil))
	for _, tc := range []struct {
		name, token, sub string
		role             auth.Role
	}{
		{"admin (RS256)", admin, "alice", auth.Admin},
		{"customer (RS256)", customer, "bob", auth.Customer},
		{"customer (ES256)", es256, "carol", auth.Customer},
	} {
		for range 2 { // the second answer comes from the cache
			p, err := tokens.Verify(ctx, tc.token)
			if err != nil {
				t.Fatalf("%s: Verify = %v", tc.name, err)
			}
			if want := auth.ProviderUserID(op.Issuer(), tc.sub); p.UserID != want || p.Role != tc.role {
				t.Errorf("%s: Verify = %+v, want user %s, role %s", tc.name, p, want, tc.role)
			}
		}
	}
}

// Every token here is refused, and none for the provider's being
// unavailable: each must end as UNAUTHENTICATED.
func TestRefused(t *testing.T) {
	op, _, tokens, _ := setup(t, oidc.Config{})
	other := oidctest.New(t) // another provider, with keys of its own
	rsa, ec := op.Keys()[0], op.Keys()[1]
	foreign := oidctest.NewKey(t, jose.RS256)
	now := time.Now()
	admin := map[string]any{"roles": []string{"admin"}}
	valid := op.Token(t, op.Claims("mallory", audience, nil))
	// The customer's token with roles: [admin] put in its payload, the
	// signature kept.
	parts := strings.Split(valid, ".")
	forged, _ := json.Marshal(op.Claims("mallory", audience, admin))
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2]
	rs384 := rsa
	rs384.Alg = jose.RS384

	hs256 := func(claims map[string]any, kid string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(claims))
		tok.Header["kid"] = kid
		s, err := tok.SignedString(rsa.PublicPEM(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none := func(claims map[string]any) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims(claims))
		tok.Header["kid"] = rsa.ID
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tok := range map[string]string{
		"another issuer":                          other.Token(t, other.Claims("mallory", audience, admin)),
		"another issuer's key, our iss":           oidctest.Sign(t, other.Keys()[0], op.Claims("mallory", audience, admin)),
		"another audience":                        op.Token(t, op.Claims("mallory", "another-shop", admin)),
		"no audience":                             op.Token(t, op.Claims("mallory", audience, map[string]any{"aud": nil})),
		"expired":                                 op.Token(t, op.Claims("mallory", audience, map[string]any{"exp": now.Add(-time.Second).Unix()})),
		"no expiry":                               op.Token(t, op.Claims("mallory", audience, map[string]any{"exp": nil})),
		"not yet valid":                           op.Token(t, op.Claims("mallory", audience, map[string]any{"nbf": now.Add(10 * time.Minute).Unix()})),
		"not valid for two minutes":               op.Token(t, op.Claims("mallory", audience, map[string]any{"nbf": now.Add(2 * time.Minute).Unix()})),
		"issued in two minutes":                   op.Token(t, op.Claims("mallory", audience, map[string]any{"iat": now.Add(2 * time.Minute).Unix()})),
		"no subject":                              op.Token(t, op.Claims("", audience, nil)),
		"alg none":                                none(op.Claims("mallory", audience, admin)),
		"alg none, no iss":                        none(map[string]any{"sub": "mallory", "role": "admin", "exp": now.Add(time.Hour).Unix()}),
		"HS256 keyed with the public key":         hs256(op.Claims("mallory", audience, admin), rsa.ID),
		"HS256 keyed with the public key, no iss": hs256(map[string]any{"sub": "mallory", "role": "admin", "exp": now.Add(time.Hour).Unix()}, rsa.ID),
		"RS384 with a published key":              oidctest.Sign(t, rs384, op.Claims("mallory", audience, admin)),
		"a key not in the set, its own kid":       oidctest.Sign(t, foreign, op.Claims("mallory", audience, admin)),
		"a key not in the set, a published kid":   oidctest.SignAs(t, foreign, rsa.ID, op.Claims("mallory", audience, admin)),
		"the EC key naming the RSA key's kid":     oidctest.SignAs(t, ec, rsa.ID, op.Claims("mallory", audience, admin)),
		"no kid":                                  oidctest.SignAs(t, rsa, "", op.Claims("mallory", audience, admin)),
		"tampered payload":                        tampered,
		"not a token":                             "not.a.token",
	} {
		p, err := tokens.Verify(context.Background(), tok)
		if err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		} else if errors.Is(err, errs.Unavailable) {
			t.Errorf("%s: refused as unavailable (%v), want unauthenticated", name, err)
		}
	}
	// The untampered token is fine: the refusal above is the tampering's.
	if _, err := tokens.Verify(context.Background(), valid); err != nil {
		t.Errorf("the token before tampering: %v", err)
	}
}

// A rotated key is used after one fetch of the key set, once the interval
// since the last fetch has passed; a withdrawn key stops verifying, even
// tokens that were verified (and cached) before.
func TestKeyRotation(t *testing.T) {
	op, _, tokens, c := setup(t, oidc.Config{})
	ctx := context.Background()
	old := op.Token(t, op.Claims("dave", audience, nil))
	if _, err := tokens.Verify(ctx, old); err != nil {
		t.Fatal(err)
	}
	fetched := op.KeySetFetches()
	op.Rotate(t, true)
	rotated := op.Token(t, op.Claims("dave", audience, nil))
	if _, err := tokens.Verify(ctx, rotated); err == nil {
		t.Fatal("a new kid was accepted without fetching the key set")
	}
	if n := op.KeySetFetches() - fetched; n != 0 {
		t.Fatalf("%d fetches within the interval after loading, want 0", n)
	}
	c.Advance(oidc.DefaultJWKSRefresh)
	if _, err := tokens.Verify(ctx, rotated); err != nil {
		t.Fatalf("the rotated key after the interval: %v", err)
	}
	if n := op.KeySetFetches() - fetched; n != 1 {
		t.Errorf("%d fetches for the rotation, want 1", n)
	}
	if p, err := tokens.Verify(ctx, old); err == nil {
		t.Errorf("a token of the withdrawn key was still accepted as %+v", p)
	}
}

// 1,000 tokens naming random kids fetch the key set at most once per
// interval: once after it passed, never within it; tokens naming no kid
// never fetch it.
func TestUnknownKidsFetchOncePerInterval(t *testing.T) {
	op, _, tokens, c := setup(t, oidc.Config{})
	key := op.Keys()[1] // ES256: signing 4,000 tokens with RSA takes seconds
	burst := func(n int, kid func() string) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range n / 8 {
					tok := oidctest.SignAs(t, key, kid(), op.Claims("eve", audience, map[string]any{"n": w*1000 + i}))
					if p, err := tokens.Verify(context.Background(), tok); err == nil {
						t.Errorf("kid %q was accepted as %+v", kid(), p)
					}
				}
			})
		}
		wg.Wait()
	}
	none := func() string { return "" }
	for i, r := range []struct {
		advance time.Duration
		kid     func() string
		want    int64
	}{
		{oidc.DefaultJWKSRefresh, none, 0},                   // no kid: no key to look for
		{0, oidctest.RandomKid, 1},                           // the interval since loading has passed
		{oidc.DefaultJWKSRefresh / 2, oidctest.RandomKid, 0}, // within the interval of that fetch
		{oidc.DefaultJWKSRefresh / 2, oidctest.RandomKid, 1}, // the interval has passed again
	} {
		c.Advance(r.advance)
		before := op.KeySetFetches()
		burst(1000, r.kid)
		if n := op.KeySetFetches() - before; n != r.want {
			t.Errorf("round %d (clock %v further): %d key-set fetches for 1,000 tokens, want %d", i, r.advance, n, r.want)
		}
	}
}

// A provider unreachable at the start: its tokens are UNAVAILABLE (not
// UNAUTHENTICATED) and Ready says so until the keys load; a provider gone
// later, even through a failed refresh, leaves the cached keys in use.
func TestUnreachableAtStart(t *testing.T) {
	op := oidctest.New(t)
	op.SetDown(true)
	c := &clock{}
	p := start(t, oidc.Config{Issuer: op.Issuer(), Audience: audience, JWKSRefresh: time.Second, Now: c.Now})
	tokens := auth.NewTokens(nil, p)
	tok := op.Token(t, op.Claims("frank", audience, nil))
	if _, err := tokens.Verify(context.Background(), tok); !errors.Is(err, auth.ErrProviderUnavailable) {
		t.Fatalf("Verify while the provider is down = %v, want ErrProviderUnavailable", err)
	}
	if err := p.Ready(); err == nil {
		t.Fatal("Ready = nil before any key loaded")
	}
	op.SetDown(false)
	loaded(t, p)
	if _, err := tokens.Verify(context.Background(), tok); err != nil {
		t.Fatalf("Verify after the keys loaded = %v", err)
	}
	op.SetDown(true)
	c.Advance(time.Second) // an unknown kid may fetch the keys again: that fails
	if _, err := tokens.Verify(context.Background(), oidctest.SignAs(t, op.Keys()[0], oidctest.RandomKid(), op.Claims("frank", audience, nil))); err == nil {
		t.Fatal("an unknown kid was accepted")
	}
	fresh := oidctest.Sign(t, op.Keys()[1], op.Claims("frank", audience, nil)) // not cached
	if _, err := tokens.Verify(context.Background(), fresh); err != nil {
		t.Errorf("Verify with the provider gone again = %v, want the cached keys used", err)
	}
	if err := p.Ready(); err != nil {
		t.Errorf("Ready with the provider gone after loading = %v, want nil", err)
	}
}

func TestConfigRefused(t *testing.T) {
	for name, cfg := range map[string]oidc.Config{
		"no issuer":           {Audience: audience},
		"plain http":          {Issuer: "http://idp.example.com/realms/shop", Audience: audience},
		"not a URL":           {Issuer: "idp.example.com", Audience: audience},
		"issuer with a query": {Issuer: "https://idp.example.com/?x=1", Audience: audience},
		"no audience":         {Issuer: "https://idp.example.com/realms/shop"},
		"max age < interval":  {Issuer: "https://idp.example.com/realms/shop", Audience: audience, JWKSRefresh: time.Hour, KeysMaxAge: time.Minute},
	} {
		if _, err := oidc.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	for _, ok := range []string{"https://tenant.eu.auth0.com/", "http://127.0.0.1:8180/realms/shop", "http://localhost:8180/realms/shop"} {
		if err := (oidc.Config{Issuer: ok, Audience: audience}).Validate(); err != nil {
			t.Errorf("Validate(%s) = %v", ok, err)
		}
	}
}

// A verified token is answered from the cache only until its own expiry:
// once exp has passed it is refused, though it was verified (and cached)
// a moment before.
func TestCachedTokenExpires(t *testing.T) {
	op, _, tokens, c := setup(t, oidc.Config{})
	ctx := context.Background()
	tok := op.Token(t, op.Claims("gina", audience, map[string]any{"exp": time.Now().Add(time.Minute).Unix()}))
	for range 2 { // the second answer comes from the cache
		if _, err := tokens.Verify(ctx, tok); err != nil {
			t.Fatalf("Verify before the expiry = %v", err)
		}
	}
	c.Advance(time.Minute + time.Second)
	if p, err := tokens.Verify(ctx, tok); err == nil {
		t.Errorf("a token past its exp was accepted as %+v", p)
	}
}

// The key-set interval counts from the last try, not the last success: with
// the provider down, 200 tokens naming unknown kids ask it once per
// interval, not once each.
func TestProviderDownAskedOncePerInterval(t *testing.T) {
	op, _, tokens, c := setup(t, oidc.Config{})
	key := op.Keys()[1]
	c.Advance(oidc.DefaultJWKSRefresh)
	op.SetDown(true)
	for round := range 2 {
		before := op.KeySetTries()
		for i := range 200 {
			tok := oidctest.SignAs(t, key, oidctest.RandomKid(), op.Claims("hank", audience, map[string]any{"n": i}))
			if p, err := tokens.Verify(context.Background(), tok); err == nil {
				t.Fatalf("an unknown kid was accepted as %+v", p)
			}
		}
		if n := op.KeySetTries() - before; n != 1 {
			t.Errorf("round %d: the provider, down, was asked for its keys %d times for 200 tokens, want 1", round, n)
		}
		c.Advance(oidc.DefaultJWKSRefresh)
	}
}
