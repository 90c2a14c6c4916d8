package oidc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"

	"storefront/internal/platform/auth"
)

// Provider verifies one OpenID provider's tokens. New returns at once; its
// keys load in the background, and until they have, its tokens answer
// auth.ErrProviderUnavailable (UNAVAILABLE) and Ready says why.
type Provider struct {
	cfg      Config
	keys     *keySet
	verifier *gooidc.IDTokenVerifier
	verified *auth.VerifiedCache

	loaded chan struct{} // closed when the first keys have loaded
	mu     sync.Mutex
	why    error // what the last failed load said, until one succeeds

	stop context.CancelFunc
	done chan struct{}
}

var _ auth.Issuer = (*Provider)(nil)

// retryFirst is the loader's first wait after a failed load; it doubles up
// to the key refresh interval.
const retryFirst = 250 * time.Millisecond

// New checks cfg and starts loading the provider's keys.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Provider{cfg: cfg, loaded: make(chan struct{}), done: make(chan struct{}),
		why: errors.New("the keys are loading")}
	p.verified = auth.NewVerifiedCache(cfg.Now)
	p.keys = &keySet{client: cfg.Client, interval: cfg.JWKSRefresh, now: cfg.Now, withdrawn: p.verified.Purge}
	// go-oidc checks the algorithm (RS256 and ES256 only, so never none or
	// HS256), the signature through keys, iss, that aud holds Audience,
	// and exp (required, without leeway).
	p.verifier = gooidc.NewVerifier(cfg.Issuer, p.keys, &gooidc.Config{
		ClientID: cfg.Audience, SupportedSigningAlgs: []string{gooidc.RS256, gooidc.ES256}, Now: cfg.Now,
	})
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go p.run(ctx)
	return p, nil
}

// Issuer is the iss the provider's tokens carry.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// Ready is nil once the keys have loaded (and stays nil: later failures keep
// the cached keys), otherwise why they have not.
func (p *Provider) Ready() error {
	select {
	case <-p.loaded:
		return nil
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Errorf("the OpenID provider's keys are not loaded: %w", p.why)
}

// Close stops the background loading and refreshing, and waits for it.
func (p *Provider) Close() {
	p.stop()
	<-p.done
}

// Verify returns the caller of a token of this provider: an admin when its
// role claim holds the admin role, a customer otherwise, whose id is
// auth.ProviderUserID(iss, sub).
func (p *Provider) Verify(ctx context.Context, token string) (auth.Principal, error) {
	select {
	case <-p.loaded:
	default:
		return auth.Principal{}, auth.ErrProviderUnavailable
	}
	if pr, ok := p.verified.Get(token); ok {
		return pr, nil
	}
	t, err := p.verifier.Verify(ctx, token)
	if err != nil {
		return auth.Principal{}, err
	}
	var claims map[string]any
	if err := t.Claims(&claims); err != nil {
		return auth.Principal{}, err
	}
	if t.Subject == "" {
		return auth.Principal{}, errors.New("the token has no subject (sub)")
	}
	if err := p.checkTimes(claims); err != nil {
		return auth.Principal{}, err
	}
	role := auth.Customer
	if hasRole(claimAt(claims, p.cfg.RoleClaim), p.cfg.AdminRole) {
		role = auth.Admin
	}
	pr := auth.Principal{UserID: auth.ProviderUserID(t.Issuer, t.Subject), Role: role}
	p.verified.Add(token, pr, t.Expiry)
	return pr, nil
}

// checkTimes refuses a token that is not valid yet (nbf) or says it was
// issued in the future (iat), beyond the leeway. go-oidc allows nbf five
// minutes ahead and does not look at iat.
func (p *Provider) checkTimes(claims map[string]any) error {
	limit := p.cfg.Now().Add(p.cfg.Leeway)
	for _, name := range []string{"nbf", "iat"} {
		v, ok := claims[name]
		if !ok {
			continue
		}
		n, ok := v.(float64)
		if !ok {
			return fmt.Errorf("the token's %s is not a number", name)
		}
		if at := time.Unix(int64(n), 0); at.After(limit) {
			return fmt.Errorf("the token's %s is %s, in the future", name, at.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// run loads the keys, retrying with backoff while the provider cannot be
// reached, then fetches them again whenever they are KeysMaxAge old.
func (p *Provider) run(ctx context.Context) {
	defer close(p.done)
	wait := retryFirst
	for {
		err := p.load(ctx)
		if err == nil {
			break
		}
		p.mu.Lock()
		p.why = err
		p.mu.Unlock()
		slog.Warn("the OpenID provider's keys did not load; its tokens answer UNAVAILABLE until they do",
			"issuer", p.cfg.Issuer, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, p.cfg.JWKSRefresh)
	}
	close(p.loaded)
	slog.Info("the OpenID provider's keys loaded", "issuer", p.cfg.Issuer, "keys", p.keys.count())
	tick := time.NewTicker(p.cfg.JWKSRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.keys.refreshIfOlder(p.cfg.KeysMaxAge)
		}
	}
}

// load runs discovery once (for the jwks_uri) and fetches the keys.
func (p *Provider) load(ctx context.Context) error {
	if !p.keys.hasURL() {
		d, err := gooidc.NewProvider(gooidc.ClientContext(ctx, p.cfg.Client), p.cfg.Issuer)
		if err != nil {
			return fmt.Errorf("discovery: %w", err)
		}
		var meta struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := d.Claims(&meta); err != nil {
			return fmt.Errorf("discovery: %w", err)
		}
		if err := checkURL("jwks_uri", meta.JWKSURI); err != nil {
			return fmt.Errorf("discovery: %w", err)
		}
		p.keys.setURL(meta.JWKSURI)
	}
	if err := p.keys.load(ctx); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	return nil
}
