package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"storefront/internal/testdb"
)

// TestAdminConsole is issue 30's scenario, on SQLite and MariaDB: the real
// binary with the demo catalog, the console at /admin/ in headless
// Chromium, driven only by roles and accessible names, every result read
// back through GraphQL.
func TestAdminConsole(t *testing.T) {
	for _, backend := range []testdb.Backend{testdb.SQLite, testdb.MySQL} {
		t.Run(string(backend), func(t *testing.T) {
			b := startBrowser(t)
			s := Start(t, testdb.Spec(t, backend))
			requireConsole(t, s)
			consoleScenario(t, b, s)
		})
	}
}

// requireConsole skips locally, and fails in CI, when the binary does not
// serve /admin/ (like the shop's browser test).
func requireConsole(t *testing.T, s *Server) {
	t.Helper()
	resp, err := http.Get(s.URL + "/admin/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("GET /admin/ = %d: the binary does not serve the console (is admin.Handler mounted?)", resp.StatusCode)
		if resp.StatusCode == http.StatusNotFound && os.Getenv("STOREFRONT_TEST_REQUIRE_BROWSER") != "1" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
}

func consoleScenario(t *testing.T, b *browser, s *Server) {
	signIn(t, b, s)

	// Open the demo T-shirt from the goods list, by its name.
	tshirt := consoleGoodsOf(t, s, "1")
	if tshirt.Name != "纯棉圆领T恤" || len(tshirt.enabled()) != 12 {
		t.Fatalf("demo T-shirt: %q with %d enabled SKUs, want 纯棉圆领T恤 with 12", tshirt.Name, len(tshirt.enabled()))
	}
	b.clickEl(b.byRole("link", tshirt.Name))
	b.byRole("textbox", "Name of 藏青")
	oldIDs := tshirt.ids()

	// Add 红色 to 颜色, price the 红色 row in bulk, stock 红色 / M.
	b.fill("New value for 颜色", "红色")
	b.press("Add value to 颜色")
	b.byRole("textbox", "Price of 红色 / S")
	b.fill("Price of all 红色", "119.00")
	b.press("Apply price to 红色")
	b.fill("Stock of 红色 / M", "30")
	b.fill("Reason for stock changes", "到货 first delivery")
	b.press("Save")
	b.waitRegion("status", "Saved")

	g := consoleGoodsOf(t, s, "1")
	if n := len(g.enabled()); n != 16 {
		t.Errorf("after adding 红色: %d enabled SKUs, want 16", n)
	}
	for _, id := range oldIDs {
		if g.byID(id) == nil {
			t.Errorf("old SKU %s is gone after adding a value", id)
		}
	}
	var redM string
	for _, size := range []string{"S", "M", "L", "XL"} {
		k := g.byText("红色," + size)
		if k == nil {
			t.Errorf("no SKU 红色,%s after the save", size)
			continue
		}
		if slices.Contains(oldIDs, k.ID) || k.SellPrice != "119.00" || k.Status != "ENABLED" {
			t.Errorf("new SKU 红色,%s = %+v, want a new id at 119.00, enabled", size, k)
		}
		want := 0
		if size == "M" {
			want, redM = 30, k.ID
		}
		if k.Stock != want {
			t.Errorf("红色,%s stock = %d, want %d", size, k.Stock, want)
		}
	}
	if redM != "" {
		rows := consoleLedger(t, s, redM)
		sum, manual := 0, 0
		for _, r := range rows {
			sum += r.ChangeNum
			if r.BizType == "manual" && r.ChangeNum == 30 && r.Remark == "到货 first delivery" && r.ChangeType == 5 {
				manual++
			}
		}
		if sum != 30 || manual != 1 {
			t.Errorf("红色/M ledger %+v: sum %d, %d manual +30 rows with the reason; want 30 and 1", rows, sum, manual)
		}
	}
	if shot := b.screenshot("editor"); shot == "" {
		t.Error("no screenshot of the editor")
	}
}

// signIn refuses the demo customer's token with a visible alert, then signs
// in with the demo admin's.
func signIn(t *testing.T, b *browser, s *Server) {
	t.Helper()
	b.navigate(s.URL + "/admin/")
	b.fill("Admin token", s.CustomerToken)
	b.press("Sign in")
	if got := b.waitRegion("alert", "FORBIDDEN"); !strings.Contains(got, "not an admin") {
		t.Errorf("customer token refused with %q, want it to say it is not an admin's", got)
	}
	var stored string
	b.exec(`return sessionStorage.getItem("storefront.admin.token") || "";`, &stored)
	if stored != "" {
		t.Errorf("a refused token was kept in sessionStorage")
	}
	b.fill("Admin token", s.AdminToken)
	b.press("Sign in")
	b.byRole("link", "纯棉圆领T恤")
	b.exec(`return sessionStorage.getItem("storefront.admin.token") || "";`, &stored)
	var local string
	b.exec(`return JSON.stringify(localStorage) + document.cookie + location.href;`, &local)
	if stored != s.AdminToken || strings.Contains(local, s.AdminToken) {
		t.Errorf("token in sessionStorage: %v; in localStorage, a cookie or the URL: %v", stored == s.AdminToken, strings.Contains(local, s.AdminToken))
	}
}

// consoleGoods is a goods as the admin API reports it, disabled SKUs included.
type consoleGoods struct {
	Name, Status string
	Version      int
	Specs        []struct {
		ID, Name string
		Values   []struct{ ID, Name string }
	}
	Skus []consoleSku
}

type consoleSku struct {
	ID, SpecValueStr, SellPrice, Status string
	Stock, Version                      int
}

func consoleGoodsOf(t *testing.T, s *Server, id string) *consoleGoods {
	t.Helper()
	r := s.Query(t, s.AdminToken, `query($id: ID!) { goods(id: $id) { name status version specs { id name values { id name } }
		skus(includeDisabled: true) { id specValueStr sellPrice status stock version } } }`, map[string]any{"id": id})
	var out struct{ Goods *consoleGoods }
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil || out.Goods == nil {
		t.Fatalf("goods %s: %s %+v", id, r.Data, r.Errors)
	}
	return out.Goods
}

func (g *consoleGoods) enabled() []consoleSku {
	var out []consoleSku
	for _, k := range g.Skus {
		if k.Status == "ENABLED" {
			out = append(out, k)
		}
	}
	return out
}

func (g *consoleGoods) ids() []string {
	var out []string
	for _, k := range g.Skus {
		out = append(out, k.ID)
	}
	sort.Strings(out)
	return out
}

func (g *consoleGoods) byID(id string) *consoleSku {
	for i := range g.Skus {
		if g.Skus[i].ID == id {
			return &g.Skus[i]
		}
	}
	return nil
}

func (g *consoleGoods) byText(text string) *consoleSku {
	for i := range g.Skus {
		if g.Skus[i].SpecValueStr == text {
			return &g.Skus[i]
		}
	}
	return nil
}

type ledgerRow struct {
	ChangeType, ChangeNum int
	BizType, Remark       string
}

func consoleLedger(t *testing.T, s *Server, itemID string) []ledgerRow {
	t.Helper()
	r := s.Query(t, s.AdminToken, `query($id: ID!) { stockLedger(itemId: $id, first: 100) { edges { node { changeType changeNum bizType remark } } } }`,
		map[string]any{"id": itemID})
	var out struct {
		StockLedger struct{ Edges []struct{ Node ledgerRow } }
	}
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
		t.Fatalf("ledger of %s: %s %+v", itemID, r.Data, r.Errors)
	}
	var rows []ledgerRow
	for _, e := range out.StockLedger.Edges {
		rows = append(rows, e.Node)
	}
	return rows
}

var _ = time.Second
