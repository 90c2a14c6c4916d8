package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// TestAdminConsoleLimits: keyboard sign-in; the API's limits (500 SKUs, 6
// dimensions) shown with the API's own words before anything is sent, and
// Save refused until the form is back within them; an API error shown with
// its message and nothing written; a goods created from the console.
func TestAdminConsoleLimits(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	requireConsole(t, s)

	// Keyboard only: the token field has the focus, Enter signs in.
	b.navigate(s.URL + "/admin/")
	b.byRole("button", "Sign in")
	if got := b.focusedName(); got != "Admin token" {
		t.Errorf("focus on load is on %q, want the Admin token field", got)
	}
	b.keys(s.AdminToken + keyEnter)
	b.clickEl(b.byRole("link", "跑步鞋（500 SKU）"))

	// 500 SKUs + one colour = 600: over the limit.
	b.fill("New value for 颜色", "色6")
	b.keys(keyEnter) // the field's Enter adds the value
	b.byRole("textbox", "Name of 色6")
	want := "too many SKUs, please split the goods into several goods (SKU 数量过多，请拆分商品): dimension sizes [6 5 5 4] give 600 combinations, at most 500 allowed"
	if main := b.regionText("main"); !strings.Contains(main, want) {
		t.Errorf("with 600 combinations the editor does not say %q: %q", want, excerpt(main, "too many"))
	}
	if b.prop(b.byRole("button", "Save"), "disabled") != true {
		t.Errorf("Save is enabled with 600 combinations")
	}
	shoe := consoleGoodsOf(t, s, "3")
	msg := apiSpecsMessage(t, s, "3", shoe, map[string][]string{"颜色": {"色6"}})
	if !strings.Contains(msg, want) {
		t.Errorf("the console's limit message %q is not the API's %q", want, msg)
	}
	b.press("Remove 色6")
	if main := b.regionText("main"); !strings.Contains(main, "Saving creates 0 SKUs, disables 0 and enables 0: 500 enabled SKUs after the save.") {
		t.Errorf("back at 500 the editor says %q", excerpt(main, "Saving creates"))
	}
	if b.prop(b.byRole("button", "Save"), "disabled") != false {
		t.Errorf("Save stays disabled back within the limits")
	}

	// 2 + 5 dimensions = 7.
	b.navigate(s.URL + "/admin/#/goods/1")
	b.byRole("textbox", "Name of 黑色")
	for i := 1; i <= 5; i++ {
		d := fmt.Sprintf("维度%d", i)
		b.fill("New dimension", d)
		b.press("Add dimension")
		b.fill("New value for "+d, "x")
		b.press("Add value to " + d)
	}
	want = "too many spec dimensions, please split the goods into several goods (规格维度过多，请拆分商品): 7 dimensions, at most 6 allowed"
	if main := b.regionText("main"); !strings.Contains(main, want) {
		t.Errorf("with 7 dimensions the editor does not say %q: %q", want, excerpt(main, "too many"))
	}
	if b.prop(b.byRole("button", "Save"), "disabled") != true {
		t.Errorf("Save is enabled with 7 dimensions")
	}
	b.press("Remove dimension 维度5")
	if main := b.regionText("main"); !strings.Contains(main, "Saving creates 12 SKUs, disables 12 and enables 0: 12 enabled SKUs after the save.") {
		t.Errorf("with 6 dimensions of which 4 new (one value each) the editor says %q", excerpt(main, "Saving creates"))
	}
	b.press("Discard changes")

	// An API error, shown with its message; nothing written.
	b.byRole("textbox", "Name of 黑色")
	before := consoleGoodsOf(t, s, "1")
	b.fill("Code of 黑色 / L", "DUP-1")
	b.fill("Code of 白色 / L", "DUP-1")
	b.press("Save")
	got := b.waitRegion("alert", "INVALID_INPUT")
	if !strings.Contains(got, "DUP-1") || !strings.Contains(got, "Nothing was saved") {
		t.Errorf("the alert for a code given twice says %q, want the API's message naming DUP-1 and that nothing was saved", got)
	}
	if after := consoleGoodsOf(t, s, "1"); after.Version != before.Version {
		t.Errorf("a refused save moved the goods version %d -> %d", before.Version, after.Version)
	}
	b.press("Discard changes")

	// The goods' own fields and a removed value, saved together: the XL
	// SKUs are disabled and kept, the rest keep their ids.
	b.clickEl(b.byRole("textbox", "Name of XL")) // the editor is back
	b.selectOption("Status", "Off shelf")
	b.selectOption("Stock mode", "Lock at order, deduct at payment")
	b.fill("Goods name", "纯棉圆领T恤（新款）")
	b.press("Remove XL")
	if main := b.regionText("main"); !strings.Contains(main, "Saving creates 0 SKUs, disables 3 and enables 0: 9 enabled SKUs after the save.") {
		t.Errorf("removing XL: the editor says %q", excerpt(main, "Saving creates"))
	}
	save(t, b)
	g := consoleGoodsOf(t, s, "1")
	if g.Name != "纯棉圆领T恤（新款）" || g.Status != "OFF_SHELF" || len(g.Skus) != 12 || len(g.enabled()) != 9 {
		t.Errorf("after the save: %q %s, %d SKUs of which %d enabled; want the new name, OFF_SHELF, 12 and 9", g.Name, g.Status, len(g.Skus), len(g.enabled()))
	}
	for _, k := range g.Skus {
		if strings.HasSuffix(k.SpecValueStr, ",XL") != (k.Status == "DISABLED") {
			t.Errorf("SKU %s %s is %s; exactly the XL ones should be disabled", k.ID, k.SpecValueStr, k.Status)
		}
	}
	var mode struct{ Goods struct{ StockMode string } }
	decode(t, s.Query(t, s.AdminToken, `{ goods(id: 1) { stockMode } }`, nil), &mode)
	if mode.Goods.StockMode != "LOCK_AT_ORDER" {
		t.Errorf("stock mode after the save: %s, want LOCK_AT_ORDER", mode.Goods.StockMode)
	}

	// A goods without specs has one row, the default SKU.
	b.clickEl(b.byRole("link", "All goods"))
	b.clickEl(b.byRole("link", "帆布托特包"))
	b.fill("Price of default SKU", "45.00")
	save(t, b)
	if bag := consoleGoodsOf(t, s, "2"); len(bag.Skus) != 1 || bag.Skus[0].SellPrice != "45.00" {
		t.Errorf("the bag after a price edit: %+v, want its one SKU at 45.00", bag.Skus)
	}

	// Create a goods: two colours, one price, an opening stock.
	b.clickEl(b.byRole("link", "All goods"))
	b.clickEl(b.byRole("link", "New goods"))
	b.fill("Goods name", "测试帽子")
	b.fill("Dimensions", "颜色: 红, 蓝")
	b.fill("Price of every SKU", "59")
	b.fill("Opening stock of every SKU", "7")
	b.press("Create goods")
	b.byRole("textbox", "Name of 蓝")
	r := s.Query(t, s.AdminToken, `{ goodsList(filter: {search: "测试帽子"}) { edges { node { name status skus { specValueStr sellPrice stock } } } } }`, nil)
	var list struct {
		GoodsList struct {
			Edges []struct {
				Node struct {
					Name, Status string
					Skus         []struct {
						SpecValueStr, SellPrice string
						Stock                   int
					}
				}
			}
		}
	}
	decode(t, r, &list)
	if len(list.GoodsList.Edges) != 1 {
		t.Fatalf("created goods: %s", r.Data)
	}
	n := list.GoodsList.Edges[0].Node
	if n.Status != "OFF_SHELF" || len(n.Skus) != 2 || n.Skus[0].SellPrice != "59.00" || n.Skus[0].Stock != 7 || n.Skus[1].SpecValueStr != "蓝" {
		t.Errorf("created goods %+v, want off shelf with SKUs 红 and 蓝 at 59.00 and stock 7", n)
	}
}

// apiSpecsMessage sends the goods' specs plus add (dimension -> new values)
// through the API and returns the refusal's message.
func apiSpecsMessage(t *testing.T, s *Server, id string, g *consoleGoods, add map[string][]string) string {
	t.Helper()
	var specs []map[string]any
	for _, sp := range g.Specs {
		var vals []map[string]any
		for _, v := range sp.Values {
			vals = append(vals, map[string]any{"id": v.ID, "name": v.Name})
		}
		for _, n := range add[sp.Name] {
			vals = append(vals, map[string]any{"name": n})
		}
		specs = append(specs, map[string]any{"id": sp.ID, "name": sp.Name, "values": vals})
	}
	r := s.Query(t, s.AdminToken, `mutation($in: UpdateGoodsSpecsInput!) { updateGoodsSpecs(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"goodsId": id, "expectedVersion": g.Version, "specs": specs, "defaultSku": map[string]any{"sellPrice": "1.00"}}})
	if len(r.Errors) == 0 {
		t.Fatalf("the API accepted specs over the limit")
	}
	return r.Errors[0].Message
}

// TestAdminConsoleSkuDetails: a SKU's ledger, its orders (a paid one
// refunded from the console) and its stock pools (created and closed), each
// checked through the API.
func TestAdminConsoleSkuDetails(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	requireConsole(t, s)
	id, stock := tshirtSku(t, s, "黑色,L")
	var p placed
	decode(t, s.queryWithKey(t, s.CustomerToken, "console-order-1", placeOrder,
		map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 2}}}), &p)
	sn := p.PlaceOrder.OrderSn
	out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", p.PlaceOrder.Amount,
		"--payment-id", "pay-"+sn, "--event-id", "evt-console").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "HTTP 200 success") {
		t.Fatalf("paying %s: %v %s", sn, err, out)
	}

	signIn(t, b, s)
	b.navigate(s.URL + "/admin/#/goods/1")
	b.press("Details of 黑色 / L")
	if got := b.focusedName(); !strings.Contains(got, "SKU 黑色 / L") {
		t.Errorf("opening the details moved the focus to %q, want its heading", got)
	}
	b.byRole("button", "Refund order "+sn)
	b.uniqueNames("the editor with a SKU's details open")
	b.fill("Refund reason for "+sn, "尺码不合适")
	b.press("Refund order " + sn)
	b.waitRegion("status", "Order "+sn+" refunded")
	var o struct{ Order struct{ Status string } }
	decode(t, s.Query(t, s.AdminToken, `query($sn: String!) { order(orderSn: $sn) { status } }`, map[string]any{"sn": sn}), &o)
	if o.Order.Status != "REFUNDED" {
		t.Errorf("order %s is %s after the console's refund, want REFUNDED", sn, o.Order.Status)
	}
	if got := stockOf(t, s, "1", id).Stock; got != stock {
		t.Errorf("黑色,L stock after order and refund = %d, want %d", got, stock)
	}

	// An order the ledger does not name yet (lock-at-order, unpaid), by its number.
	var scarf struct {
		GoodsList struct {
			Edges []struct {
				Node struct {
					Skus []struct{ ID string }
				}
			}
		}
	}
	decode(t, s.Query(t, "", `{ goodsList(filter: {search: "真丝围巾"}) { edges { node { skus { id } } } } }`, nil), &scarf)
	var lock placed
	decode(t, s.queryWithKey(t, s.CustomerToken, "console-order-2", placeOrder,
		map[string]any{"items": []map[string]any{{"itemId": scarf.GoodsList.Edges[0].Node.Skus[0].ID, "quantity": 1}}}), &lock)
	b.fill("Order number", lock.PlaceOrder.OrderSn)
	b.press("Find order")
	b.waitFor("the looked-up order", 20*time.Second, func() (bool, error) {
		main := b.regionText("main")
		i := strings.Index(main, lock.PlaceOrder.OrderSn)
		return i >= 0 && strings.Contains(main[i:], "UNPAID"), nil
	})
	if !b.absent("button", "Refund order "+lock.PlaceOrder.OrderSn) {
		t.Errorf("an unpaid order offers a refund")
	}

	b.fill("Pool name", "秒杀")
	b.fill("Pool price", "79.00")
	b.fill("Pool quantity", "5")
	b.press("Create pool")
	b.waitRegion("status", "Pool 秒杀 created")
	pools := consolePools(t, s, id)
	if len(pools) != 1 || pools[0].Name != "秒杀" || pools[0].Price != "79.00" || pools[0].Quantity != 5 || pools[0].Status != "ACTIVE" {
		t.Fatalf("pools after the console's create: %+v", pools)
	}
	if got := stockOf(t, s, "1", id).Stock; got != stock-5 {
		t.Errorf("main stock with a pool of 5 = %d, want %d", got, stock-5)
	}
	b.press(fmt.Sprintf("Close pool 秒杀 (%s)", pools[0].ID))
	b.waitRegion("status", "Pool 秒杀 closed")
	if pools = consolePools(t, s, id); pools[0].Status != "ENDED" {
		t.Errorf("pool after the console's close: %+v", pools[0])
	}
	if got := stockOf(t, s, "1", id).Stock; got != stock {
		t.Errorf("main stock after closing the pool = %d, want %d", got, stock)
	}
	b.waitFor("the ledger's pool rows", 20*time.Second, func() (bool, error) {
		main := b.regionText("main")
		return strings.Contains(main, "7 moved to a pool") && strings.Contains(main, "8 returned from a pool"), nil
	})
}

type consolePool struct {
	ID, Name, Price, Status string
	Quantity                int
}

func consolePools(t *testing.T, s *Server, itemID string) []consolePool {
	t.Helper()
	r := s.Query(t, s.AdminToken, `query($id: ID!) { stockPools(itemId: $id) { edges { node { id name price status quantity } } } }`,
		map[string]any{"id": itemID})
	var out struct {
		StockPools struct{ Edges []struct{ Node consolePool } }
	}
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
		t.Fatalf("stockPools: %s %+v", r.Data, r.Errors)
	}
	var pools []consolePool
	for _, e := range out.StockPools.Edges {
		pools = append(pools, e.Node)
	}
	return pools
}
