// Package alipay is Alipay's open platform (RSA2, page pay), written with
// the standard library from the published protocol: every request's
// parameters signed with the app's key (SHA256 with RSA over the sorted
// k=v&… of the parameters), answers and asynchronous notifications
// verified with Alipay's public key. Amounts are yuan strings ("12.34").
package alipay

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SignContent is the text signed for params: every parameter with a value
// but those in exclude, sorted by name, as name=value joined by &, values
// as they are (not URL-encoded). A request is signed without "sign"; a
// notification is verified without "sign" and "sign_type".
func SignContent(params url.Values, exclude ...string) string {
	keys := make([]string, 0, len(params))
	for k, v := range params {
		if len(v) == 0 || v[0] == "" || slices.Contains(exclude, k) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(params.Get(k))
	}
	return b.String()
}

// Sign is RSA2: SHA256 with RSA (PKCS #1 v1.5) of content, base64.
func Sign(key *rsa.PrivateKey, content string) (string, error) {
	h := sha256.Sum256([]byte(content))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:])
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// Verify checks an RSA2 signature of content.
func Verify(pub *rsa.PublicKey, content, signature string) error {
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return fmt.Errorf("sign is not base64: %w", err)
	}
	h := sha256.Sum256([]byte(content))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig)
}
