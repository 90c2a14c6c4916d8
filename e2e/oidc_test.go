package e2e

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"storefront/internal/platform/auth/oidc/oidctest"
	"storefront/internal/testsupport/testdb"
)

// A shop points the binary at its provider with three flags (issuer,
// audience, Keycloak's role claim): the provider's admin changes the
// catalog, its customer orders and reads the order, the demo's HS256
// tokens still work, and /metrics says the keys loaded.
func TestOIDCFlags(t *testing.T) {
	op := oidctest.New(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite), "--oidc-issuer", op.Issuer(), "--oidc-audience", "storefront",
		"--oidc-role-claim", "realm_access.roles")
	roles := func(r ...string) map[string]any {
		return map[string]any{"realm_access": map[string]any{"roles": r}}
	}
	admin := op.Token(t, op.Claims("alice", "storefront", roles("admin")))
	customer := op.Token(t, op.Claims("bob", "storefront", roles("offline_access")))

	g := must[struct{ Skus []struct{ ID string } }](t, s.Query(t, "", `{ goods(slug: "demo-bag") { skus { id } } }`, nil), "goods")
	sku := g.Skus[0].ID
	placed := must[struct{ OrderSn string }](t, s.post(t, customer, "oidc-e2e",
		`mutation($sku: ID!) { placeOrder(input: {items: [{itemId: $sku, quantity: 1}]}) { orderSn } }`, map[string]any{"sku": sku}), "placeOrder")
	mine := must[struct{ OrderSn string }](t, s.Query(t, customer, `query($sn: String!) { order(orderSn: $sn) { orderSn } }`,
		map[string]any{"sn": placed.OrderSn}), "order")
	if mine.OrderSn != placed.OrderSn {
		t.Errorf("the customer's order read back as %q, want %q", mine.OrderSn, placed.OrderSn)
	}
	wantCode(t, "the provider customer's refundOrder", s.Query(t, customer, `mutation($sn: String!) { refundOrder(orderSn: $sn, reason: "e2e") { orderSn } }`,
		map[string]any{"sn": placed.OrderSn}), "FORBIDDEN")
	// The provider's admin sees the customer's order and takes the bag off
	// the shelf.
	seen := must[struct{ OrderSn string }](t, s.Query(t, admin, `query($sn: String!) { order(orderSn: $sn) { orderSn } }`,
		map[string]any{"sn": placed.OrderSn}), "order")
	if seen.OrderSn != placed.OrderSn {
		t.Errorf("the provider admin read the order as %q", seen.OrderSn)
	}
	id := must[struct{ ID string }](t, s.Query(t, "", `{ goods(slug: "demo-bag") { id } }`, nil), "goods").ID
	off := must[struct{ Status string }](t, s.Query(t, admin, `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: OFF_SHELF) { status } }`,
		map[string]any{"id": id}), "setGoodsStatus")
	if off.Status != "OFF_SHELF" {
		t.Errorf("setGoodsStatus by the provider admin: %s", off.Status)
	}
	// The demo's own tokens beside them.
	must[struct{ Status string }](t, s.Query(t, s.AdminToken, `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: ON_SHELF) { status } }`,
		map[string]any{"id": id}), "setGoodsStatus")
	wantCode(t, "another audience", s.Query(t, op.Token(t, op.Claims("alice", "another-shop", roles("admin"))),
		`mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: OFF_SHELF) { status } }`, map[string]any{"id": id}), "UNAUTHENTICATED")

	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "storefront_oidc_ready 1") {
		t.Errorf("/metrics has no storefront_oidc_ready 1:\n%s", grepLines(string(body), "storefront_oidc"))
	}
}

// An issuer without an audience, or an audience without an issuer, is a
// configuration error at start, not a server that accepts any aud.
func TestOIDCFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--oidc-issuer", "https://idp.example.com/realms/shop"},
		{"--oidc-audience", "storefront"},
		{"--oidc-issuer", "http://idp.example.com/realms/shop", "--oidc-audience", "storefront"},
	} {
		cmd := exec.Command(binary(t), append([]string{"serve", "--demo", "--db", "sqlite:" + t.TempDir() + "/x.db", "--addr", freeAddr(t)}, args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "oidc") && !strings.Contains(string(out), "OpenID") {
			t.Errorf("serve %v: %v\n%s; want a refusal naming the OpenID flags", args, err, out)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
