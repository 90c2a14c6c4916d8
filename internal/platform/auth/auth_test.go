package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/platform/auth"
	"storefront/internal/vocab/errs"
)

const secret = "test-secret-0123456789"

func signer(t *testing.T, s string) *auth.Signer {
	t.Helper()
	sg, err := auth.NewSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

func sign(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestVerifyAcceptsIssued(t *testing.T) {
	s := signer(t, secret)
	tok, err := s.Issue("42", auth.Admin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Verify(tok)
	if err != nil || p.UserID != "42" || !p.IsAdmin() {
		t.Fatalf("Verify(issued) = %+v, %v", p, err)
	}
}

func TestVerifyRejects(t *testing.T) {
	s := signer(t, secret)
	future := time.Now().Add(time.Hour).Unix()
	good := jwt.MapClaims{"sub": "1", "role": "admin", "exp": future}
	issued, _ := s.Issue("1", auth.Customer, time.Hour)
	if _, err := s.Verify(issued); err != nil { // now cached: its forgeries must still fail
		t.Fatal(err)
	}
	parts := strings.Split(issued, ".")
	// Same header and signature, payload swapped for an admin one: a forgery.
	forgedPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1","role":"admin","exp":` + jwtNum(future) + `}`))
	unsigned := func(c jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for name, tok := range map[string]string{
		"forged payload":  parts[0] + "." + forgedPayload + "." + parts[2],
		"expired":         sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"sub": "1", "role": "admin", "exp": time.Now().Add(-time.Minute).Unix()}),
		"alg none":        unsigned(good),
		"wrong secret":    sign(t, jwt.SigningMethodHS256, []byte("another-secret-0123456789"), good),
		"missing exp":     sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"sub": "1", "role": "admin"}),
		"HS512 same key":  sign(t, jwt.SigningMethodHS512, []byte(secret), good),
		"unknown role":    sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"sub": "1", "role": "root", "exp": future}),
		"empty subject":   sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"role": "admin", "exp": future}),
		"not a token":     "garbage",
		"truncated token": issued[:len(issued)-3],
	} {
		if p, err := s.Verify(tok); err == nil {
			t.Errorf("%s: Verify accepted %q as %+v", name, tok, p)
		}
	}
}

// flipSignatureByte changes one byte of the token's decoded signature.
// Editing the base64 text instead can leave the decoded bytes as they were
// (its last character carries unused bits), which would test nothing.
func flipSignatureByte(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) == 0 {
		t.Fatalf("token %q has no signature to forge: %v", tok, err)
	}
	sig[len(sig)/2] ^= 0x01
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func jwtNum(n int64) string {
	b, _ := jwt.NewNumericDate(time.Unix(n, 0)).MarshalJSON()
	return string(b)
}

func TestShortSecretRefused(t *testing.T) {
	if _, err := auth.NewSigner("short"); err == nil {
		t.Error("NewSigner accepted a 5-character secret")
	}
}

// The middleware never rejects by itself; Require turns what it saw into
// the two error kinds the API promises.
func TestMiddlewareAndRequire(t *testing.T) {
	s := signer(t, secret)
	admin, _ := s.Issue("a", auth.Admin, time.Hour)
	customer, _ := s.Issue("c", auth.Customer, time.Hour)
	expired := sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"sub": "a", "role": "admin", "exp": time.Now().Add(-time.Minute).Unix()})
	for _, tc := range []struct {
		name, header string
		want         error
	}{
		{"no header", "", errs.Unauthenticated},
		{"admin", "Bearer " + admin, nil},
		{"customer", "Bearer " + customer, errs.Forbidden},
		{"expired admin", "Bearer " + expired, errs.Unauthenticated},
		{"not bearer", "Basic " + admin, errs.Unauthenticated},
		{"forged", "Bearer " + flipSignatureByte(t, admin), errs.Unauthenticated},
	} {
		var got error
		h := auth.NewTokens(s, nil).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, got = auth.Require(r.Context(), auth.Admin)
		}))
		req := httptest.NewRequest("POST", "/graphql", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if (tc.want == nil) != (got == nil) || (tc.want != nil && !errors.Is(got, tc.want)) {
			t.Errorf("%s: Require(admin) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := auth.Require(context.Background(), auth.Customer, auth.Admin); !errors.Is(err, errs.Unauthenticated) {
		t.Errorf("anonymous Require = %v", err)
	}
}

// A provider user's id is the same for every token of the user, differs
// for each issuer and subject, fits the 64-byte owner columns, and is no
// subject an HS256 token may carry.
func TestReservedProviderIDs(t *testing.T) {
	const iss = "https://cognito-idp.eu-central-1.amazonaws.com/eu-central-1_AbCdEfGhI"
	sub := "0f6b2a5e-8f3c-4d2e-9a51-3c1b7e9d2f40"
	id := auth.ProviderUserID(iss, sub)
	if id != auth.ProviderUserID(iss, sub) || !strings.HasPrefix(id, auth.ProviderPrefix) || len(id) > 64 {
		t.Fatalf("ProviderUserID = %q: want a stable id under 64 bytes starting with %q", id, auth.ProviderPrefix)
	}
	for _, other := range [][2]string{{iss + "x", sub}, {iss, sub + "x"}, {iss + "\x00", sub}, {"https://a", "b\x00c"}} {
		if auth.ProviderUserID(other[0], other[1]) == id {
			t.Errorf("ProviderUserID%q = ProviderUserID(%q, %q)", other, iss, sub)
		}
	}
	s := signer(t, secret)
	if tok, err := s.Issue(id, auth.Customer, time.Hour); err == nil {
		t.Errorf("Issue(%q) = %q, want refused", id, tok)
	}
	minted := sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"sub": id, "role": "customer", "exp": time.Now().Add(time.Hour).Unix()})
	if p, err := s.Verify(minted); err == nil {
		t.Errorf("an HS256 token with the subject %q verified as %+v", id, p)
	}
}

// An OpenID provider's token refused because its keys have not loaded is
// UNAVAILABLE, not UNAUTHENTICATED: the same token may pass in a moment.
func TestRequireWhileProviderUnavailable(t *testing.T) {
	idp := stubIssuer{iss: "https://idp.example.com", err: auth.ErrProviderUnavailable}
	tok := sign(t, jwt.SigningMethodRS256, rsaKey(t), jwt.MapClaims{"iss": idp.iss, "sub": "x", "exp": time.Now().Add(time.Hour).Unix()})
	var got error
	h := auth.NewTokens(signer(t, secret), idp).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, got = auth.Require(r.Context(), auth.Customer)
	}))
	req := httptest.NewRequest("POST", "/graphql", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if !errors.Is(got, errs.Unavailable) || errors.Is(got, errs.Unauthenticated) {
		t.Errorf("Require = %v, want the provider's UNAVAILABLE", got)
	}
}

// stubIssuer stands for an OpenID provider whose keys have not loaded.
type stubIssuer struct {
	iss string
	err error
}

func (s stubIssuer) Issuer() string { return s.iss }
func (s stubIssuer) Ready() error   { return s.err }
func (s stubIssuer) Verify(context.Context, string) (auth.Principal, error) {
	return auth.Principal{}, s.err
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// recordingIssuer accepts every token it is handed and counts them: the
// router alone must keep other tokens from it.
type recordingIssuer struct {
	iss   string
	calls *int
}

func (r recordingIssuer) Issuer() string { return r.iss }
func (r recordingIssuer) Ready() error   { return nil }
func (r recordingIssuer) Verify(context.Context, string) (auth.Principal, error) {
	*r.calls++
	return auth.Principal{UserID: auth.ProviderUserID(r.iss, "x"), Role: auth.Admin}, nil
}

// A token goes to the one verifier its iss and alg name, before any key is
// used: the provider sees only tokens of its issuer, the signer only
// HS256 tokens without an issuer, and anything else is refused by neither.
func TestRouting(t *testing.T) {
	const iss = "https://idp.example.com/realms/shop"
	var calls int
	s := signer(t, secret)
	tokens := auth.NewTokens(s, recordingIssuer{iss: iss, calls: &calls})
	exp := time.Now().Add(time.Hour).Unix()
	key := rsaKey(t)
	own, _ := s.Issue("alice", auth.Admin, time.Hour)
	for _, tc := range []struct {
		name, token string
		provider    bool // reaches the provider
		ok          bool
	}{
		{"the provider's", sign(t, jwt.SigningMethodRS256, key, jwt.MapClaims{"iss": iss, "sub": "x", "exp": exp}), true, true},
		{"HS256 naming the provider", sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"iss": iss, "sub": "x", "role": "admin", "exp": exp}), true, true},
		{"our own", own, false, true},
		{"another issuer", sign(t, jwt.SigningMethodRS256, key, jwt.MapClaims{"iss": iss + "/", "sub": "x", "exp": exp}), false, false},
		{"our secret, another issuer", sign(t, jwt.SigningMethodHS256, []byte(secret), jwt.MapClaims{"iss": "https://evil.example.com", "sub": "x", "role": "admin", "exp": exp}), false, false},
		{"RS256 without an issuer", sign(t, jwt.SigningMethodRS256, key, jwt.MapClaims{"sub": "x", "role": "admin", "exp": exp}), false, false},
		{"HS512 without an issuer", sign(t, jwt.SigningMethodHS512, []byte(secret), jwt.MapClaims{"sub": "x", "role": "admin", "exp": exp}), false, false},
	} {
		before := calls
		_, err := tokens.Verify(context.Background(), tc.token)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok %v", tc.name, err, tc.ok)
		}
		if reached := calls > before; reached != tc.provider {
			t.Errorf("%s: reached the provider %v, want %v", tc.name, reached, tc.provider)
		}
	}
}
