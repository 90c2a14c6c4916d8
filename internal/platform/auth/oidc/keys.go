package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// algs are the only signature algorithms accepted: asymmetric, so that no
// key this server holds can sign (HS256 "signed" with a provider's public
// key is alg confusion), and none is not one.
var algs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// maxKeySetBytes bounds a key set's body: a provider's is a few KiB.
const maxKeySetBytes = 1 << 20

// keySet is the provider's signing keys by kid, fetched from its jwks_uri
// again when a token names a kid it lacks (rotation), but at most once per
// interval: tokens with made-up kids cannot make the server hammer the
// provider. A failed fetch keeps the keys it had. It is go-oidc's KeySet,
// whose RemoteKeySet fetches again for every unknown kid.
type keySet struct {
	client   *http.Client
	interval time.Duration
	now      func() time.Time
	// withdrawn is called when a fetch drops a kid: tokens verified with
	// that key must not be answered from a cache any more.
	withdrawn func()

	mu        sync.Mutex
	url       string
	keys      map[string]jose.JSONWebKey
	lastFetch time.Time // the last fetch's start, whatever its outcome
	lastOK    time.Time // the last successful fetch's start
	inflight  *fetch

	fetchesOK, fetchesFailed atomic.Int64 // for /metrics
}

// fetch is one fetch of the key set that several callers may wait for.
type fetch struct {
	done chan struct{}
	err  error // set before done is closed
}

var errUnknownKey = errors.New("the token's kid is not in the provider's key set")

// VerifySignature checks the signature of a compact JWS with the key its kid
// names and returns the payload; go-oidc's verifier has already refused
// algorithms other than RS256 and ES256 and tokens with several signatures.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, algs)
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a token must have exactly one signature")
	}
	h := jws.Signatures[0].Header
	if h.KeyID == "" {
		// Without a kid the only way to a key is trying each.
		return nil, errors.New("the token names no key (kid)")
	}
	key, err := k.key(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	if key.Algorithm != "" && key.Algorithm != h.Algorithm {
		return nil, fmt.Errorf("key %q is for %s, the token says %s", h.KeyID, key.Algorithm, h.Algorithm)
	}
	// go-jose refuses a key whose type or curve does not fit the algorithm.
	return jws.Verify(key)
}

// key returns the key of kid, fetching the set again when kid is unknown
// and the last fetch is older than the interval.
func (k *keySet) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	k.mu.Lock()
	key, ok := k.keys[kid]
	var f *fetch
	if !ok {
		f = k.startLocked(false)
	}
	k.mu.Unlock()
	if ok {
		return key, nil
	}
	if f == nil {
		return jose.JSONWebKey{}, errUnknownKey
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return jose.JSONWebKey{}, ctx.Err()
	}
	k.mu.Lock()
	key, ok = k.keys[kid]
	k.mu.Unlock()
	if !ok {
		return jose.JSONWebKey{}, errUnknownKey
	}
	return key, nil
}

// load fetches the key set now, or joins the fetch in flight, and waits for
// it: the loader's attempts until the first keys arrive.
func (k *keySet) load(ctx context.Context) error {
	k.mu.Lock()
	f := k.startLocked(true)
	k.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refreshIfOlder starts a fetch when the last successful one started at
// least age ago (and the interval allows one).
func (k *keySet) refreshIfOlder(age time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.now().Sub(k.lastOK) >= age {
		k.startLocked(false)
	}
}

// startLocked returns the fetch in flight, or starts one; nil when the last
// fetch started less than the interval ago and force is false. The fetch is
// not the caller's: a request that gives up does not cancel it for the
// others waiting.
func (k *keySet) startLocked(force bool) *fetch {
	if k.inflight != nil {
		return k.inflight
	}
	now := k.now()
	if !force && !k.lastFetch.IsZero() && now.Sub(k.lastFetch) < k.interval {
		return nil
	}
	f := &fetch{done: make(chan struct{})}
	k.inflight, k.lastFetch = f, now
	url := k.url
	go func() {
		keys, err := k.get(url)
		k.mu.Lock()
		dropped := false
		if err == nil {
			for kid := range k.keys {
				if _, ok := keys[kid]; !ok {
					dropped = true
				}
			}
			k.keys, k.lastOK = keys, now
			k.fetchesOK.Add(1)
		} else {
			k.fetchesFailed.Add(1)
			if k.keys != nil {
				slog.Warn("fetching the OpenID provider's keys failed; the cached keys stay in use", "url", url, "err", err)
			}
		}
		k.inflight = nil
		k.mu.Unlock()
		if dropped {
			k.withdrawn()
		}
		f.err = err
		close(f.done)
	}()
	return f
}

// get fetches and parses the key set at url.
func (k *keySet) get(url string) (map[string]jose.JSONWebKey, error) {
	if url == "" {
		return nil, errors.New("no jwks_uri: discovery has not succeeded")
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set answered %s", resp.Status)
	}
	if len(body) > maxKeySetBytes {
		return nil, fmt.Errorf("the key set is larger than %d bytes", maxKeySetBytes)
	}
	return parseKeySet(body)
}

// parseKeySet keeps the keys a token of ours may name: public RSA keys and
// P-256 keys for signing, with a kid. Keys of kinds go-jose does not know
// (a provider may also publish encryption or Ed448 keys) are skipped, as
// RFC 7517 §5 asks, rather than failing the whole set.
func parseKeySet(body []byte) (map[string]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("the key set is not a JWK set: %w", err)
	}
	keys := map[string]jose.JSONWebKey{}
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := json.Unmarshal(raw, &key); err != nil {
			continue
		}
		if _, dup := keys[key.KeyID]; dup || !usable(key) {
			continue
		}
		keys[key.KeyID] = key
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set has no RS256 or ES256 signing key with a kid")
	}
	return keys, nil
}

func usable(key jose.JSONWebKey) bool {
	if key.KeyID == "" || (key.Use != "" && key.Use != "sig") || !key.IsPublic() {
		return false
	}
	switch pub := key.Key.(type) {
	case *rsa.PublicKey:
		return key.Algorithm == "" || key.Algorithm == string(jose.RS256)
	case *ecdsa.PublicKey:
		return pub.Curve == elliptic.P256() && (key.Algorithm == "" || key.Algorithm == string(jose.ES256))
	}
	return false
}

func (k *keySet) setURL(url string) {
	k.mu.Lock()
	k.url = url
	k.mu.Unlock()
}

func (k *keySet) hasURL() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.url != ""
}

func (k *keySet) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}
