package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"storefront/ent"
)

// secretPrefix starts every signing secret (Standard Webhooks).
const secretPrefix = "whsec_"

// newSecret returns whsec_<base64 of 32 random bytes>.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Sign returns the webhook-signature header of body sent as message id at
// unix time ts with secret, as the Standard Webhooks specification says:
// "v1," + base64(HMAC-SHA256(key, id + "." + ts + "." + body)), where key
// is the base64-decoded part of the secret after "whsec_".
// TestSignMatchesTheSpecsExample checks it against the specification's own.
func Sign(secret, id string, ts int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// Verify reports whether header (space-separated signatures, as a receiver
// gets it) holds a valid v1 signature of body: what a receiver does, here
// for tests and for anyone writing one.
func Verify(secret, id string, ts int64, body []byte, header string) bool {
	want, err := Sign(secret, id, ts, body)
	if err != nil {
		return false
	}
	for _, s := range strings.Fields(header) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// sign returns the webhook-signature header of an attempt to h: the
// signature with h's secret and, while the secret a rotation replaced
// still signs, the one with that secret after it (Standard Webhooks
// allows several, space-separated), so that a receiver that has either
// accepts the delivery.
func (s *Service) sign(h *ent.Webhook, id string, ts int64, body []byte) (string, error) {
	sig, err := Sign(h.Secret, id, ts, body)
	if err != nil || !previousSigns(h, s.now()) {
		return sig, err
	}
	old, err := Sign(h.PreviousSecret, id, ts, body)
	if err != nil {
		return "", err
	}
	return sig + " " + old, nil
}

// previousSigns reports whether h's previous secret still signs at now.
func previousSigns(h *ent.Webhook, now time.Time) bool {
	return h.PreviousSecret != "" && h.PreviousSecretUntil != nil && now.Before(*h.PreviousSecretUntil)
}
