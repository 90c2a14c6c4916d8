// Package paystub plays the payment providers' APIs on local HTTP servers
// for tests: each checks every request the way its provider documents
// (signatures with the merchant's public key, required fields) and answers
// as the provider does, signed with keys the tests generate. Knobs make a
// stand-in refuse a refund or lose its answer (the request is read, the
// connection closed), so retries can be watched.
package paystub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Key is a generated RSA key pair.
func Key(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// WritePEM writes k's private key (PKCS #8) and public key (PKIX) to dir
// and returns their paths: what a shop gets from its provider.
func WritePEM(t testing.TB, dir, name string, k *rsa.PrivateKey) (private, public string) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	private, public = filepath.Join(dir, name+"_key.pem"), filepath.Join(dir, name+"_pub.pem")
	for path, b := range map[string]*pem.Block{private: {Type: "PRIVATE KEY", Bytes: der}, public: {Type: "PUBLIC KEY", Bytes: pub}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return private, public
}

// Knobs change how a stand-in answers refunds.
type Knobs struct {
	mu sync.Mutex
	// DropAnswers: this many refund requests are read and recorded, and
	// their connections closed without an answer.
	DropAnswers int
	// Refuse: refunds are refused as the provider refuses them.
	Refuse bool
	// Settle: refunds are answered settled at once (else pending, where
	// the provider has a pending state).
	Settle bool
	// Requests: every refund request's refund number, in arrival order.
	Requests []string
	// Problems: every way a request broke the provider's rules.
	Problems []string
}

// Set changes the knobs under their lock.
func (k *Knobs) Set(f func(k *Knobs)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k)
}

// Refunds is the refund numbers received so far.
func (k *Knobs) Refunds() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.Requests...)
}

// Faults is the rule breaks seen so far.
func (k *Knobs) Faults() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.Problems...)
}

func (k *Knobs) problem(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.Problems = append(k.Problems, s)
}

// refund records a refund request and says whether its answer is dropped.
func (k *Knobs) refund(no string) (drop, refuse, settle bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.Requests = append(k.Requests, no)
	if k.DropAnswers > 0 {
		k.DropAnswers--
		return true, false, false
	}
	return false, k.Refuse, k.Settle
}

// hangUp closes the connection without an answer: the request arrived,
// its answer was lost.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("paystub: the connection cannot be hijacked")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		_ = c.Close()
	}
}
