package auth_test

import (
	"context"
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
