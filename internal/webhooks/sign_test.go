package webhooks

import (
	"strings"
	"testing"
)

// The example of the Standard Webhooks specification
// (standard-webhooks/standard-webhooks, spec/standard-webhooks.md and the
// libraries' tests).
func TestSignMatchesTheSpecsExample(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts     = 1614265330
		body   = `{"test": 2432232314}`
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	got, err := Sign(secret, id, ts, []byte(body))
	if err != nil || got != want {
		t.Fatalf("Sign(spec example) = %q, %v; want %q", got, err, want)
	}
	if !Verify(secret, id, ts, []byte(body), "v1,bm9wZQ== "+want) {
		t.Error("Verify refused the spec's signature among others")
	}
	if Verify(secret, id, ts+1, []byte(body), want) {
		t.Error("Verify took a signature of another timestamp")
	}
}

func TestNewSecretIsLongAndPrefixed(t *testing.T) {
	s := newSecret()
	if !strings.HasPrefix(s, "whsec_") || len(s) < len("whsec_")+32 {
		t.Fatalf("newSecret() = %q", s)
	}
	if _, err := Sign(s, "id", 1, nil); err != nil {
		t.Fatalf("Sign with a new secret: %v", err)
	}
}
