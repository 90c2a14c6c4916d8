package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// rlServer is the whole handler with a rate limiter, on a real loopback
// listener, with the demo catalog.
type rlServer struct {
	url             string
	db              *store.DB
	sku             string // a demo SKU with stock
	customer, admin string
}

func newRLServer(t *testing.T, db *store.DB, limits RateLimits) *rlServer {
	t.Helper()
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	r := Compose(t, db, catalog.DefaultConfig())
	ids, err := demo.Seed(context.Background(), r.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{DB: db, Signer: signer, RateLimiter: NewRateLimiter(limits), Resolver: r})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &rlServer{url: srv.URL + "/graphql", db: db}
	if s.customer, err = signer.Issue("rl-customer", auth.Customer, time.Hour); err != nil {
		t.Fatal(err)
	}
	if s.admin, err = signer.Issue("rl-admin", auth.Admin, time.Hour); err != nil {
		t.Fatal(err)
	}
	// A SKU with stock, read as a shopper would (a query: never limited).
	body, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { goods(id: $id) { skus { id stock } } }`,
		"variables": map[string]any{"id": strconv.FormatInt(ids[demo.TShirtCode], 10)}})
	resp, err := http.Post(s.url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var g struct {
		Data struct {
			Goods struct {
				Skus []struct {
					ID    string
					Stock int
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
		t.Fatal(err)
	}
	for _, k := range g.Data.Goods.Skus {
		if k.Stock > 0 {
			s.sku = k.ID
			break
		}
	}
	if s.sku == "" {
		t.Fatal("the demo T-shirt has no SKU in stock")
	}
	return s
}

type rlAnswer struct {
	status     int
	retryAfter string
	code       string // the first error's
	body       string
}

// send posts one GraphQL request; hdr adds headers in pairs.
func (s *rlServer) send(t *testing.T, token, query string, vars map[string]any, hdr ...string) rlAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return rlAnswer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	_ = json.Unmarshal(raw, &r)
	a := rlAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(raw)}
	if len(r.Errors) > 0 {
		a.code, _ = r.Errors[0].Extensions["code"].(string)
	}
	return a
}

const cartCreateWithLine = `mutation($sku: ID!) { cartCreate(input: {lines: [{itemId: $sku, quantity: 1}]}) { id lines { quantity } } }`

// rows counts the carts and cart lines stored.
func (s *rlServer) rows(t *testing.T) (carts, lines int) {
	t.Helper()
	ctx := context.Background()
	if err := s.db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM cart").Scan(&carts); err != nil {
		t.Fatal(err)
	}
	if err := s.db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM cart_line").Scan(&lines); err != nil {
		t.Fatal(err)
	}
	return carts, lines
}

// tight has a burst of 5 anonymous writes and a refill too slow to matter
// during a test (one token an hour).
var tight = RateLimits{Anonymous: Rate{1.0 / 3600, 5}, Account: Rate{1.0 / 3600, 8}}

// A burst past the anonymous limit from one address: exactly the burst is
// served; every other request is HTTP 429 with Retry-After and
// RATE_LIMITED, and stores nothing; a query is never limited.
func TestRateLimitAnonymousBurst(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newRLServer(t, db, tight)
		const n = 20
		answers := make([]rlAnswer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { answers[i] = s.send(t, "", cartCreateWithLine, map[string]any{"sku": s.sku}) })
		}
		wg.Wait()
		ok, refused := 0, 0
		for _, a := range answers {
			switch {
			case a.status == 200 && a.code == "":
				ok++
			case a.status == http.StatusTooManyRequests && a.code == "RATE_LIMITED" && a.retryAfter != "":
				if secs, err := strconv.Atoi(a.retryAfter); err != nil || secs < 1 {
					t.Errorf("Retry-After %q is not a positive number of seconds", a.retryAfter)
				}
				refused++
			default:
				t.Errorf("neither served nor refused as RATE_LIMITED: %d %q %s", a.status, a.retryAfter, a.body)
			}
		}
		if ok != 5 || refused != n-5 {
			t.Errorf("%d served, %d refused; want 5 and %d", ok, refused, n-5)
		}
		carts, lines := s.rows(t)
		if carts != ok || lines != ok {
			t.Errorf("%d carts and %d lines stored after %d served requests", carts, lines, ok)
		}
		// An operation of more root fields than the burst never fits.
		if a := s.send(t, "", `mutation { a: cartCreate { id } b: cartCreate { id } c: cartCreate { id } d: cartCreate { id } e: cartCreate { id } f: cartCreate { id } }`, nil); a.status != 429 || a.code != "RATE_LIMITED" {
			t.Errorf("6 aliased cartCreate at burst 5: %d %s", a.status, a.body)
		}
		if c2, l2 := s.rows(t); c2 != carts || l2 != lines {
			t.Errorf("rows went %d/%d -> %d/%d after refusals", carts, lines, c2, l2)
		}
		if a := s.send(t, "", `{ goodsList(first: 1) { totalCount } }`, nil); a.status != 200 || a.code != "" {
			t.Errorf("a query after the limit: %d %s", a.status, a.body)
		}
	})
}

// X-Forwarded-For is ignored from a peer that is not a trusted proxy
// (spoofed addresses share the connection's bucket), and believed from
// one that is (each forwarded client has its own).
func TestRateLimitForwardedFor(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		untrusted := newRLServer(t, db, tight)
		refused := 0
		for i := range 10 {
			a := untrusted.send(t, "", `mutation { cartCreate { id } }`, nil, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1))
			if a.status == 429 {
				refused++
			}
		}
		if refused != 5 {
			t.Errorf("untrusted peer with 10 spoofed X-Forwarded-For: %d refused, want 5 (one bucket)", refused)
		}
		limits := tight
		limits.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		trusted := newRLServer(t, db, limits)
		for i := range 10 {
			if a := trusted.send(t, "", `mutation { cartCreate { id } }`, nil, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1)); a.status != 200 {
				t.Errorf("trusted proxy, client %d: %d %s", i, a.status, a.body)
			}
		}
	})
}

// A customer (and an admin) is limited by its own subject's bucket: the
// anonymous traffic of the same address does not refuse it, and a
// customer over its own limit does not refuse another subject.
func TestRateLimitAccountsApart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newRLServer(t, db, tight)
		for range 6 {
			s.send(t, "", `mutation { cartCreate { id } }`, nil)
		}
		if a := s.send(t, "", `mutation { cartCreate { id } }`, nil); a.status != 429 {
			t.Fatalf("the anonymous bucket is not empty: %d %s", a.status, a.body)
		}
		for i := range 8 {
			if a := s.send(t, s.customer, cartCreateWithLine, map[string]any{"sku": s.sku}); a.status != 200 || a.code != "" {
				t.Fatalf("customer write %d beside a limited anonymous address: %d %s", i, a.status, a.body)
			}
		}
		if a := s.send(t, s.customer, `mutation { cartCreate { id } }`, nil); a.status != 429 || a.code != "RATE_LIMITED" {
			t.Errorf("customer's 9th write at burst 8: %d %s", a.status, a.body)
		}
		if a := s.send(t, s.admin, `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: ON_SHELF) { id } }`, map[string]any{"id": "1"}); a.status != 200 || a.code != "" {
			t.Errorf("admin beside a limited customer: %d %s", a.status, a.body)
		}
	})
}

// The limiter's memory is bounded: idle buckets (full again) go, and
// however many addresses come, at most MaxBuckets are kept.
func TestRateLimitBucketsBounded(t *testing.T) {
	b := newBuckets[netip.Addr](Rate{PerSecond: 1, Burst: 10}, 100)
	now := time.Unix(1_000_000, 0)
	for i := range 10_000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		b.take(a, 1, now.Add(time.Duration(i)*time.Microsecond))
		if n := b.size(); n > 100 {
			t.Fatalf("%d buckets after %d addresses, bound 100", n, i+1)
		}
	}
	// A refill period later, every bucket is full: one take sweeps them.
	later := now.Add(11 * time.Second)
	b.take(netip.MustParseAddr("192.0.2.1"), 1, later)
	if n := b.size(); n != 1 {
		t.Errorf("%d buckets after the others idled a refill period, want 1", n)
	}
	// An evicted bucket was full: the client is refused no sooner than
	// if it had been kept.
	key := netip.MustParseAddr("192.0.2.2")
	for i := range 10 {
		if _, refused := b.take(key, 1, later); refused {
			t.Fatalf("take %d of a burst of 10 refused", i)
		}
	}
	if _, refused := b.take(key, 1, later); !refused {
		t.Error("the 11th take of a burst of 10 was served")
	}
}

// The client address: the peer, or X-Forwarded-For read from the right
// past trusted proxies only; IPv6 clients by /64.
func TestRateLimitClientKey(t *testing.T) {
	l := NewRateLimiter(RateLimits{TrustedProxies: mustProxies(t, "10.0.0.0/8, 192.0.2.7")})
	for _, tc := range []struct {
		peer string
		xff  []string
		want string
	}{
		{"198.51.100.1:5000", nil, "198.51.100.1"},
		{"198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"}, // untrusted peer: ignored
		{"10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"10.1.2.3:5000", []string{"1.1.1.1, 203.0.113.9, 10.9.9.9"}, "203.0.113.9"}, // the client wrote 1.1.1.1
		{"10.1.2.3:5000", []string{"1.1.1.1", "203.0.113.9, 192.0.2.7"}, "203.0.113.9"},
		{"10.1.2.3:5000", []string{"junk, 10.9.9.9"}, "10.9.9.9"},
		{"10.1.2.3:5000", []string{"10.4.4.4"}, "10.4.4.4"}, // only proxies: the farthest
		{"10.1.2.3:5000", []string{"[2001:db8::1]:443"}, "2001:db8::"},
		{"[2001:db8:1:2:3:4:5:6]:5000", nil, "2001:db8:1:2::"},
		{"[::ffff:198.51.100.1]:5000", nil, "198.51.100.1"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
		r.RemoteAddr = tc.peer
		for _, h := range tc.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		if got := l.clientKey(r); got.String() != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
}

func mustProxies(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, err := ParseTrustedProxies(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseTrustedProxies(t *testing.T) {
	p := mustProxies(t, " 10.0.0.0/8 ,127.0.0.1,, ::1 , 2001:db8::/32")
	if len(p) != 4 || p[1].String() != "127.0.0.1/32" || p[2].String() != "::1/128" {
		t.Errorf("parsed %v", p)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8, proxy.local"); err == nil {
		t.Error("a host name was accepted")
	}
}

// A fresh bucket holds exactly its burst: one mutation of burst aliased
// root fields is served whole, and the next root field is refused.
func TestRateLimitBurstInOneMutation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newRLServer(t, db, tight) // anonymous burst 5
		q := "mutation {"
		for i := range int(tight.Anonymous.Burst) {
			q += fmt.Sprintf(" c%d: cartCreate { id }", i)
		}
		q += " }"
		if a := s.send(t, "", q, nil); a.status != 200 || a.code != "" {
			t.Fatalf("a mutation of exactly the burst (%d root fields) on a fresh bucket: %d %s", tight.Anonymous.Burst, a.status, a.body)
		}
		if a := s.send(t, "", `mutation { cartCreate { id } }`, nil); a.status != 429 || a.code != "RATE_LIMITED" {
			t.Errorf("one more after the burst: %d %s", a.status, a.body)
		}
	})
}

// Each customer has a bucket of its own: after customer A's is empty,
// customer B's writes are served up to B's own burst.
func TestRateLimitCustomersApart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newRLServer(t, db, tight)
		signer, err := auth.NewSigner("server-test-secret-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		other, err := signer.Issue("rl-customer-b", auth.Customer, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		burst := int(tight.Account.Burst)
		for i := range burst {
			if a := s.send(t, s.customer, `mutation { cartCreate { id } }`, nil); a.status != 200 || a.code != "" {
				t.Fatalf("customer A's write %d: %d %s", i, a.status, a.body)
			}
		}
		if a := s.send(t, s.customer, `mutation { cartCreate { id } }`, nil); a.status != 429 {
			t.Fatalf("customer A's bucket is not empty after %d writes: %d %s", burst, a.status, a.body)
		}
		for i := range burst {
			if a := s.send(t, other, `mutation { cartCreate { id } }`, nil); a.status != 200 || a.code != "" {
				t.Fatalf("customer B's write %d after A's bucket emptied: %d %s", i, a.status, a.body)
			}
		}
	})
}
