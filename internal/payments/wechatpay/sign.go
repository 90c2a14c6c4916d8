// Package wechatpay is WeChat Pay API v3 (直连商户, Native pay), written
// with the standard library from the published protocol: requests signed
// with the merchant's key in a WECHATPAY2-SHA256-RSA2048 Authorization
// header; answers and notifications verified with WeChat Pay's public key
// (the public-key mode WeChat Pay offers since 2024, named by its key id in
// Wechatpay-Serial); a notification's resource decrypted with
// AEAD_AES_256_GCM under the APIv3 key. Amounts are integer fen.
package wechatpay

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Message is the signed text of a request: method, canonical URL (path
// and query), timestamp, nonce and body, each line ending in \n.
func Message(method, canonicalURL string, timestamp int64, nonce, body string) string {
	return fmt.Sprintf("%s\n%s\n%d\n%s\n%s\n", method, canonicalURL, timestamp, nonce, body)
}

// ResponseMessage is the signed text of an answer or a notification:
// timestamp, nonce and body, each line ending in \n.
func ResponseMessage(timestamp, nonce, body string) string {
	return timestamp + "\n" + nonce + "\n" + body + "\n"
}

// Sign is SHA256 with RSA (PKCS #1 v1.5) of message, base64.
func Sign(key *rsa.PrivateKey, message string) (string, error) {
	h := sha256.Sum256([]byte(message))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, h[:])
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// Verify checks a base64 SHA256-with-RSA signature of message.
func Verify(pub *rsa.PublicKey, message, signature string) error {
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return fmt.Errorf("signature is not base64: %w", err)
	}
	h := sha256.Sum256([]byte(message))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig)
}

// Authorization is the request's Authorization header.
func Authorization(mchID, serial, nonce string, timestamp int64, signature string) string {
	return fmt.Sprintf(`WECHATPAY2-SHA256-RSA2048 mchid="%s",nonce_str="%s",timestamp="%d",serial_no="%s",signature="%s"`,
		mchID, nonce, timestamp, serial, signature)
}

// ParseAuthorization reads an Authorization header's fields (the local
// stand-in in tests checks requests with it).
func ParseAuthorization(h string) (map[string]string, error) {
	rest, ok := strings.CutPrefix(h, "WECHATPAY2-SHA256-RSA2048 ")
	if !ok {
		return nil, fmt.Errorf("authorization type: %q", h)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return nil, fmt.Errorf("authorization field %q", kv)
		}
		out[k] = v[1 : len(v)-1]
	}
	return out, nil
}

// Decrypt opens an AEAD_AES_256_GCM resource: base64 ciphertext with its
// 16-byte tag at the end, the nonce and associated data as sent.
func Decrypt(key []byte, nonce, associatedData, ciphertext string) ([]byte, error) {
	ct, err := base64.StdEncoding.DecodeString(ciphertext)
	if err != nil {
		return nil, fmt.Errorf("ciphertext is not base64: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(nonce))
	if err != nil {
		return nil, err
	}
	return gcm.Open(nil, []byte(nonce), ct, []byte(associatedData))
}

// Encrypt seals plaintext as WeChat Pay does (the stand-in in tests).
func Encrypt(key []byte, nonce, associatedData string, plaintext []byte) (string, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(nonce))
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(gcm.Seal(nil, []byte(nonce), plaintext, []byte(associatedData))), nil
}

// nonce is a request's random string: 32 upper-case hex digits.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}
