package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"storefront/internal/app"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/auth/oidc/oidctest"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

const oidcAudience = "storefront"

// oidcShop is the app as serve builds it with --oidc-issuer (a stand-in
// provider, Keycloak's role claim) beside its HS256 signer, behind a real
// HTTP server, with the demo catalog.
type oidcShop struct {
	url    string // http://…, no path
	op     *oidctest.Provider
	idp    *oidc.Provider
	signer *auth.Signer
	db     *store.DB
	ids    map[string]int64
	sku    string // a T-shirt SKU with stock
}

func newOIDCShop(t *testing.T, db *store.DB, down bool) *oidcShop {
	t.Helper()
	op := oidctest.New(t)
	op.SetDown(down)
	idp, err := oidc.New(oidc.Config{Issuer: op.Issuer(), Audience: oidcAudience, RoleClaim: "realm_access.roles", JWKSRefresh: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.DefaultConfig()
	cfg.HTTP.OIDC = idp
	cfg.HTTP.Live = server.LiveOptions{}
	sf := app.New(db, nil, signer, cfg)
	t.Cleanup(sf.Close)
	ids, err := demo.Seed(context.Background(), sf.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sf.Handler())
	t.Cleanup(ts.Close)
	s := &oidcShop{url: ts.URL, op: op, idp: idp, signer: signer, db: db, ids: ids}
	var g struct {
		Goods struct {
			Skus []struct {
				ID    string
				Stock int
			}
		}
	}
	s.must(t, "", `query($id: ID!) { goods(id: $id) { skus { id stock } } }`, map[string]any{"id": fmt.Sprint(ids[demo.TShirtCode])}, &g)
	for _, k := range g.Goods.Skus {
		if k.Stock >= 10 && s.sku == "" {
			s.sku = k.ID
		}
	}
	return s
}

type oidcAnswer struct {
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions struct{ Code string }
	}
}

func (a oidcAnswer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	return a.Errors[0].Extensions.Code
}

// post sends one GraphQL request over HTTP, signed in with token ("": none).
func (s *oidcShop) post(t *testing.T, token, query string, vars map[string]any) oidcAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a oidcAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("%s: %v", resp.Status, err)
	}
	return a
}

// must posts and decodes data into out, failing on any error.
func (s *oidcShop) must(t *testing.T, token, query string, vars map[string]any, out any) {
	t.Helper()
	a := s.post(t, token, query, vars)
	if len(a.Errors) > 0 {
		t.Fatalf("%s: %+v", query, a.Errors)
	}
	if err := json.Unmarshal(a.Data, out); err != nil {
		t.Fatal(err)
	}
}

func (s *oidcShop) orders(t *testing.T) int {
	t.Helper()
	n, err := s.db.Client.Order.Query().Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (s *oidcShop) bagStatus(t *testing.T) string {
	t.Helper()
	admin, _ := s.signer.Issue("ops", auth.Admin, time.Hour)
	var g struct{ Goods struct{ Status string } }
	s.must(t, admin, `query($id: ID!) { goods(id: $id) { status } }`, map[string]any{"id": fmt.Sprint(s.ids[demo.BagCode])}, &g)
	return g.Goods.Status
}

// keycloak is a token of the stand-in with Keycloak's realm roles.
func (s *oidcShop) keycloak(t *testing.T, sub string, roles ...string) string {
	return s.op.Token(t, s.op.Claims(sub, oidcAudience, map[string]any{"realm_access": map[string]any{"roles": append([]string{"offline_access"}, roles...)}}))
}

const (
	placeOrder  = `mutation($sku: ID!) { placeOrder(input: {items: [{itemId: $sku, quantity: 1}]}) { orderSn } }`
	setBag      = `mutation($id: ID!, $s: GoodsStatus!) { setGoodsStatus(goodsId: $id, status: $s) { status } }`
	readOrder   = `query($sn: String!) { order(orderSn: $sn) { orderSn } myOrders(first: 10) { edges { node { orderSn } } } }`
	orderAnswer = `{"order":{"orderSn":%q},"myOrders":{"edges":[{"node":{"orderSn":%q}}]}}`
)

// A shop's provider signs its admins and customers in: an admin changes the
// catalog and a customer orders and reads the order, through real HTTP,
// beside HS256 tokens; every bad token of the issue's list is refused with
// UNAUTHENTICATED and does nothing; connection_init takes the same tokens.
func TestOIDCSignIn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newOIDCShop(t, db, false)
		wait.For(t, "the provider's keys loaded", func() bool { return s.idp.Ready() == nil })
		bag := fmt.Sprint(s.ids[demo.BagCode])

		// Refused, each with UNAUTHENTICATED, and nothing done.
		now := time.Now()
		other := oidctest.New(t)
		key := s.op.Keys()[0]
		adminRoles := map[string]any{"realm_access": map[string]any{"roles": []string{"admin"}}}
		valid := s.keycloak(t, "mallory")
		parts := strings.Split(valid, ".")
		forged, _ := json.Marshal(s.op.Claims("mallory", oidcAudience, adminRoles))
		hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(s.op.Claims("mallory", oidcAudience, adminRoles)))
		hs.Header["kid"] = key.ID
		confused, err := hs.SignedString(key.PublicPEM(t))
		if err != nil {
			t.Fatal(err)
		}
		none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims(s.op.Claims("mallory", oidcAudience, adminRoles))).
			SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		refused := map[string]string{
			"another issuer":                  other.Token(t, other.Claims("mallory", oidcAudience, adminRoles)),
			"another audience":                s.op.Token(t, s.op.Claims("mallory", "another-shop", adminRoles)),
			"expired":                         s.op.Token(t, s.op.Claims("mallory", oidcAudience, map[string]any{"exp": now.Add(-time.Minute).Unix(), "realm_access": adminRoles["realm_access"]})),
			"not yet valid":                   s.op.Token(t, s.op.Claims("mallory", oidcAudience, map[string]any{"nbf": now.Add(10 * time.Minute).Unix(), "realm_access": adminRoles["realm_access"]})),
			"alg none":                        none,
			"HS256 keyed with the public key": confused,
			"a key not in the key set":        oidctest.SignAs(t, oidctest.NewKey(t, jose.RS256), key.ID, s.op.Claims("mallory", oidcAudience, adminRoles)),
			"tampered payload":                parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2],
		}
		orders := s.orders(t)
		for name, tok := range refused {
			if a := s.post(t, tok, placeOrder, map[string]any{"sku": s.sku}); a.code() != "UNAUTHENTICATED" {
				t.Errorf("%s: placeOrder answered %s %+v, want UNAUTHENTICATED", name, a.Data, a.Errors)
			}
			if a := s.post(t, tok, setBag, map[string]any{"id": bag, "s": "OFF_SHELF"}); a.code() != "UNAUTHENTICATED" {
				t.Errorf("%s: setGoodsStatus answered %s %+v, want UNAUTHENTICATED", name, a.Data, a.Errors)
			}
		}
		if n := s.orders(t); n != orders {
			t.Errorf("%d orders after the refused tokens, want %d", n, orders)
		}
		if st := s.bagStatus(t); st != "ON_SHELF" {
			t.Errorf("the bag is %s after the refused tokens, want ON_SHELF", st)
		}

		// An admin of the provider changes the catalog; a customer of it may not.
		customer := s.keycloak(t, "bob")
		if a := s.post(t, customer, setBag, map[string]any{"id": bag, "s": "OFF_SHELF"}); a.code() != "FORBIDDEN" {
			t.Errorf("a provider customer's setGoodsStatus: %s %+v, want FORBIDDEN", a.Data, a.Errors)
		}
		var set struct{ SetGoodsStatus struct{ Status string } }
		s.must(t, s.keycloak(t, "alice", "admin"), setBag, map[string]any{"id": bag, "s": "OFF_SHELF"}, &set)
		if set.SetGoodsStatus.Status != "OFF_SHELF" || s.bagStatus(t) != "OFF_SHELF" {
			t.Errorf("the provider admin's setGoodsStatus left the bag %s", s.bagStatus(t))
		}

		// A customer of the provider orders and reads the order back, with
		// another token of the same user; nobody else sees it, not the
		// provider's other users and not an HS256 user of the same subject.
		var placed struct{ PlaceOrder struct{ OrderSn string } }
		s.must(t, customer, placeOrder, map[string]any{"sku": s.sku}, &placed)
		sn := placed.PlaceOrder.OrderSn
		var read json.RawMessage
		s.must(t, oidctest.Sign(t, s.op.Keys()[1], s.op.Claims("bob", oidcAudience, nil)), readOrder, map[string]any{"sn": sn}, &read)
		if want := fmt.Sprintf(orderAnswer, sn, sn); string(read) != want {
			t.Errorf("the customer's order read back: %s, want %s", read, want)
		}
		hsBob, _ := s.signer.Issue("bob", auth.Customer, time.Hour)
		for name, tok := range map[string]string{"another provider user": s.keycloak(t, "carol"), "an HS256 user of the same sub": hsBob} {
			var got json.RawMessage
			s.must(t, tok, readOrder, map[string]any{"sn": sn}, &got)
			if string(got) != `{"order":null,"myOrders":{"edges":[]}}` {
				t.Errorf("%s sees %s", name, got)
			}
		}

		// HS256 tokens keep working beside the provider's.
		var own struct{ PlaceOrder struct{ OrderSn string } }
		s.must(t, hsBob, placeOrder, map[string]any{"sku": s.sku}, &own)

		// connection_init: the provider's token is accepted, a tampered one
		// closes the connection with 4403.
		ws := "ws" + strings.TrimPrefix(s.url, "http") + "/graphql"
		connect(t, ws, map[string]any{"Authorization": "Bearer " + customer})
		bad := dialRaw(t, ws)
		bad.send(t, "", "connection_init", map[string]any{"Authorization": "Bearer " + refused["tampered payload"]})
		if code, reason := closed(t, bad.c); code != 4403 {
			t.Errorf("connection_init with a tampered provider token: close %d %q, want 4403", code, reason)
		}
	})
}

// A provider unreachable when the server starts: the server serves, its
// users' tokens answer UNAVAILABLE (connection_init closes with 1013) and
// /readyz 503 until the keys load; HS256 tokens and anonymous reads work
// all along.
func TestOIDCProviderUnreachableAtStart(t *testing.T) {
	s := newOIDCShop(t, testdb.Open(t, testdb.SQLite), true)
	customer := s.keycloak(t, "bob")
	ready := func() (int, string) {
		resp, err := http.Get(s.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, s.op.Issuer()) {
		t.Errorf("/readyz with the provider down: %d %q, want 503 naming the issuer", code, body)
	}
	orders := s.orders(t)
	a := s.post(t, customer, placeOrder, map[string]any{"sku": s.sku})
	if a.code() != "UNAVAILABLE" || !strings.Contains(a.Errors[0].Message, "identity provider") {
		t.Errorf("placeOrder with the provider down: %+v, want UNAVAILABLE naming the identity provider", a.Errors)
	}
	if n := s.orders(t); n != orders {
		t.Errorf("%d orders after UNAVAILABLE, want %d", n, orders)
	}
	ws := "ws" + strings.TrimPrefix(s.url, "http") + "/graphql"
	w := dialRaw(t, ws)
	w.send(t, "", "connection_init", map[string]any{"Authorization": "Bearer " + customer})
	if code, reason := closed(t, w.c); code != coderws.StatusTryAgainLater {
		t.Errorf("connection_init with the provider down: close %d %q, want 1013", code, reason)
	}
	hsBob, _ := s.signer.Issue("bob", auth.Customer, time.Hour)
	var own struct{ PlaceOrder struct{ OrderSn string } }
	s.must(t, hsBob, placeOrder, map[string]any{"sku": s.sku}, &own)

	s.op.SetDown(false)
	wait.For(t, "the provider's keys loaded", func() bool { return s.idp.Ready() == nil })
	if code, body := ready(); code != http.StatusOK {
		t.Errorf("/readyz after the keys loaded: %d %q", code, body)
	}
	var placed struct{ PlaceOrder struct{ OrderSn string } }
	s.must(t, customer, placeOrder, map[string]any{"sku": s.sku}, &placed)
}
