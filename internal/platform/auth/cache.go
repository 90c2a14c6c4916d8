package auth

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// VerifiedCache remembers tokens that passed verification, until their
// expiry: a client sends the same token with every request, and parsing and
// checking it again was a visible share of each checkout request's CPU
// (docs/benchmarks.md). Keyed by the whole token, signature included, so
// only the very string that was verified hits. The HS256 signer keeps one,
// and so does an OpenID provider's verifier (auth/oidc), which purges it
// when the provider withdraws a key.
type VerifiedCache struct {
	lru *lru.Cache[string, verifiedToken]
	now func() time.Time
}

type verifiedToken struct {
	p   Principal
	exp time.Time
}

// verifiedTokens bounds a cache: a few MiB at most.
const verifiedTokens = 10_000

// NewVerifiedCache returns an empty cache reading the time from now.
func NewVerifiedCache(now func() time.Time) *VerifiedCache {
	c, err := lru.New[string, verifiedToken](verifiedTokens)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return &VerifiedCache{lru: c, now: now}
}

// Get returns the caller of a token verified before that has not expired.
func (c *VerifiedCache) Get(token string) (Principal, bool) {
	v, ok := c.lru.Get(token)
	if !ok {
		return Principal{}, false
	}
	if !c.now().Before(v.exp) {
		c.lru.Remove(token)
		return Principal{}, false
	}
	return v.p, true
}

// Add remembers that token verified as p, until exp.
func (c *VerifiedCache) Add(token string, p Principal, exp time.Time) {
	c.lru.Add(token, verifiedToken{p: p, exp: exp})
}

// Purge forgets every token: the keys that verified them may be gone.
func (c *VerifiedCache) Purge() { c.lru.Purge() }

// Len is the number of tokens remembered.
func (c *VerifiedCache) Len() int { return c.lru.Len() }
