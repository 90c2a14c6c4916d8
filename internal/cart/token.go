package cart

import (
	"crypto/rand"
	"encoding/hex"
)

// tokenBytes is the randomness of a cart id: 128 bits, so that knowing one
// cart's id tells nothing about another's and guessing one is hopeless.
const tokenBytes = 16

func newToken() string {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// wellFormed says whether t could be a token; others are answered as
// unknown without a query.
func wellFormed(t string) bool {
	if len(t) != 2*tokenBytes {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
