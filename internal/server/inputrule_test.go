package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
	"storefront/internal/app"
	"storefront/internal/demo"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
)

// TestEveryStringArgumentFollowsTheInputRule finds every string argument
// and input field of every query and mutation by introspection (String,
// ID and every custom scalar, so a field added to the schema is probed
// without a line here) and sends each, in an otherwise valid request, a
// NUL, a byte that is not UTF-8 (raw in the body: what a hostile client
// sends, encoding/json would turn it into U+FFFD), an escape character, a
// line feed, a value one over the field's limit and one at it. Each probe
// must get the same answer on SQLite, MariaDB and PostgreSQL, never
// INTERNAL; each bad value INVALID_INPUT naming the field (the line feed
// is accepted where the field declares lines, listed in linesAccepted).
// The NUL goes a second time as an inline literal (a GraphQL \u0000
// escape in the document).
func TestEveryStringArgumentFollowsTheInputRule(t *testing.T) {
	type key struct{ probe, op, slot string }
	answers := map[key]map[string]string{} // backend → code ("" = accepted)
	var backends []string
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		backend := db.Dialect.Name()
		backends = append(backends, backend)
		s := newProbeServer(t, db)
		schema := s.introspect(t)
		n := 0
		for _, root := range []string{"Query", "Mutation"} {
			for _, f := range schema.types[schema.roots[root]].Fields {
				for _, arg := range f.Args {
					for _, slot := range schema.slots(arg.Type, []argStep{{key: arg.Name}}, 0) {
						for _, p := range probes(s.limit(root, f.Name, slot)) {
							vars := s.base(t, f)
							vars = probeSetAt(schema, vars, f.Args, slot.path, p.value)
							a := s.send(t, root, f, vars, p.rawBadUTF8, false)
							answers[key{p.name, root + "." + f.Name, slot.String()}] = probeSet(answers[key{p.name, root + "." + f.Name, slot.String()}], backend, a.code)
							checkProbe(t, p, root+"."+f.Name, slot, a)
							if p.name == "nul" {
								lit := s.send(t, root, f, vars, false, true)
								answers[key{"nul-literal", root + "." + f.Name, slot.String()}] = probeSet(answers[key{"nul-literal", root + "." + f.Name, slot.String()}], backend, lit.code)
								checkProbe(t, p, root+"."+f.Name+" (inline literal)", slot, lit)
							}
							n++
						}
					}
				}
			}
		}
		if n < 100 {
			t.Errorf("only %d probes: introspection found too few string arguments", n)
		}
		t.Logf("%s: %d probes", backend, n)
	})
	if len(backends) < 2 {
		return
	}
	keys := make([]key, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		by := answers[k]
		first := by[backends[0]]
		for _, b := range backends[1:] {
			if by[b] != first {
				t.Errorf("%s %s (%s): %s answers %q, %s answers %q", k.op, k.slot, k.probe, backends[0], first, b, by[b])
			}
		}
	}
}

func probeSet(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// linesAccepted are the fields that may hold line feeds, carriage returns
// and tabs, each for a reason: long text a person writes in paragraphs.
var linesAccepted = map[string]string{
	"Mutation.createGoods input.description":   "a goods' description is paragraphs",
	"Mutation.updateGoods input.description":   "a goods' description is paragraphs",
	"Mutation.placeOrder input.remark":         "a buyer's note to the shop may be several lines",
	"Mutation.createWebhook input.description": "an operator's note on the endpoint may be several lines",
}

type probe struct {
	name       string
	value      string
	rawBadUTF8 bool // value is a marker replaced by a byte 0xE9 in the body
	refused    bool // must be INVALID_INPUT
}

const badUTF8Marker = "zzBADUTF8zz"

// probes are the values sent to one string field of the given limit.
func probes(l textLimit) []probe {
	long, atLimit := strings.Repeat("é", l.max+1), strings.Repeat("é", l.max)
	if l.bytes {
		long, atLimit = strings.Repeat("a", l.max+1), strings.Repeat("a", l.max)
	}
	return []probe{
		{name: "nul", value: "demo\x00tshirt", refused: true},
		{name: "not-utf8", value: badUTF8Marker, rawBadUTF8: true, refused: true},
		{name: "escape", value: "a\x1bb", refused: true},
		{name: "newline", value: "a\nb", refused: true},
		{name: "over-limit", value: long, refused: true},
		{name: "at-limit", value: atLimit},
	}
}

func checkProbe(t *testing.T, p probe, op string, slot slotPath, a probeAnswer) {
	t.Helper()
	if a.code == "INTERNAL" || a.status >= 500 {
		t.Errorf("%s %s (%s): INTERNAL (status %d): %s", op, slot, p.name, a.status, a.body)
		return
	}
	refused := p.refused
	if p.name == "newline" {
		_, ok := linesAccepted[strings.TrimSuffix(op, " (inline literal)")+" "+slot.String()]
		refused = !ok
	}
	if !refused {
		return // at the limit, or a line feed where lines are allowed: any answer the backends agree on
	}
	if a.code != "INVALID_INPUT" {
		t.Errorf("%s %s (%s): code %q, want INVALID_INPUT: %s", op, slot, p.name, a.code, a.body)
		return
	}
	if !strings.HasSuffix(a.field, slot.String()) {
		t.Errorf("%s %s (%s): extensions.field %q does not name the field", op, slot, p.name, a.field)
	}
}

// probeServer is the whole GraphQL handler with every service, the demo
// catalog and one of each thing an argument may name.
type probeServer struct {
	h                                 http.Handler
	admin                             string
	goods, sku, category, order, cart string
	hook, pool                        string
	declared                          map[string]textLimit // "Type.field" or "Type.field(arg)" → @text
	schema                            *introSchema
}

type textLimit struct {
	max   int
	bytes bool
}

func newProbeServer(t *testing.T, db *store.DB) *probeServer {
	t.Helper()
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.DefaultConfig()
	cfg.Payments = cfg.Payments.With(mock.Demo("probe-secret"))
	cfg.HTTP.Introspection = true
	sf := app.New(db, nil, signer, cfg)
	t.Cleanup(sf.Close)
	ids, err := demo.Seed(context.Background(), sf.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	s := &probeServer{h: sf.Handler()}
	if s.admin, err = signer.Issue("probe-admin", auth.Admin, time.Hour); err != nil {
		t.Fatal(err)
	}
	s.declared = declaredLimits()
	s.goods = strconv.FormatInt(ids[demo.TShirtCode], 10)
	var g struct {
		Goods struct {
			Category struct{ ID string }
			Skus     []struct {
				ID    string
				Stock int
			}
		}
	}
	s.must(t, `query($id: ID!) { goods(id: $id) { category { id } skus { id stock } } }`, map[string]any{"id": s.goods}, &g)
	s.category = g.Goods.Category.ID
	for _, k := range g.Goods.Skus {
		if k.Stock > 10 && s.sku == "" {
			s.sku = k.ID
		}
	}
	var o struct{ PlaceOrder struct{ OrderSn string } }
	s.must(t, `mutation($sku: ID!) { placeOrder(input: {items: [{itemId: $sku, quantity: 1}]}) { orderSn } }`, map[string]any{"sku": s.sku}, &o)
	s.order = o.PlaceOrder.OrderSn
	var c struct{ CartCreate struct{ ID string } }
	s.must(t, `mutation($sku: ID!) { cartCreate(input: {lines: [{itemId: $sku, quantity: 1}]}) { id } }`, map[string]any{"sku": s.sku}, &c)
	s.cart = c.CartCreate.ID
	var w struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	s.must(t, `mutation { createWebhook(input: {url: "https://93.184.216.34/hook", events: ["OrderPaid"]}) { webhook { id } } }`, nil, &w)
	s.hook = w.CreateWebhook.Webhook.ID
	var p struct{ CreateStockPool struct{ ID string } }
	s.must(t, `mutation($sku: ID!) { createStockPool(input: {itemId: $sku, name: "probe", price: "1.00", quantity: 1, startsAt: "2030-01-01T00:00:00Z", endsAt: "2030-01-02T00:00:00Z"}) { id } }`, map[string]any{"sku": s.sku}, &p)
	s.pool = p.CreateStockPool.ID
	return s
}

// declaredLimits reads the @text declarations from the schema the server
// serves (introspection does not show directives on fields); a field
// without one has the default, 255 characters.
func declaredLimits() map[string]textLimit {
	out := map[string]textLimit{}
	read := func(ds ast.DirectiveList) (textLimit, bool) {
		d := ds.ForName("text")
		if d == nil {
			return textLimit{}, false
		}
		l := textLimit{max: 255}
		if a := d.Arguments.ForName("max"); a != nil {
			l.max, _ = strconv.Atoi(a.Value.Raw)
		}
		if a := d.Arguments.ForName("bytes"); a != nil {
			l.bytes = a.Value.Raw == "true"
		}
		return l, true
	}
	for _, def := range graph.NewExecutableSchema(graph.Config{}).Schema().Types {
		for _, f := range def.Fields {
			if l, ok := read(f.Directives); ok {
				out[def.Name+"."+f.Name] = l
			}
			for _, a := range f.Arguments {
				if l, ok := read(a.Directives); ok {
					out[def.Name+"."+f.Name+"("+a.Name+")"] = l
				}
			}
		}
	}
	return out
}

// limit is the declared limit of the field a slot ends in.
func (s *probeServer) limit(root, field string, slot slotPath) textLimit {
	k := root + "." + field + "(" + slot.path[0].key + ")"
	if slot.owner != "" {
		k = slot.owner + "." + slot.leaf
	}
	if l, ok := s.declared[k]; ok {
		return l
	}
	return textLimit{max: 255}
}

func (s *probeServer) must(t *testing.T, query string, vars map[string]any, into any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	a := s.post(body)
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal([]byte(a.body), &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s: %s", query, a.body)
	}
	if err := json.Unmarshal(r.Data, into); err != nil {
		t.Fatal(err)
	}
}

type probeAnswer struct {
	status      int
	code, field string
	body        string
}

func (s *probeServer) post(body []byte) probeAnswer {
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.admin)
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	a := probeAnswer{status: w.Code, body: w.Body.String()}
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	_ = json.Unmarshal(w.Body.Bytes(), &r)
	if len(r.Errors) > 0 {
		a.code, _ = r.Errors[0].Extensions["code"].(string)
		a.field, _ = r.Errors[0].Extensions["field"].(string)
	}
	return a
}

// send runs field f of root with args vars, as variables or, literal,
// written inline in the document.
func (s *probeServer) send(t *testing.T, root string, f introField, vars map[string]any, rawBadUTF8, literal bool) probeAnswer {
	t.Helper()
	op := "query"
	if root == "Mutation" {
		op = "mutation"
	}
	var decl, args []string
	for _, a := range f.Args {
		v, ok := vars[a.Name]
		if !ok {
			continue
		}
		if literal {
			args = append(args, a.Name+": "+s.schema.renderLiteral(v, a.Type))
			continue
		}
		decl = append(decl, "$"+a.Name+": "+a.Type.String())
		args = append(args, a.Name+": $"+a.Name)
	}
	q := op
	if len(decl) > 0 {
		q += "(" + strings.Join(decl, ", ") + ")"
	}
	q += " { " + f.Name
	if len(args) > 0 {
		q += "(" + strings.Join(args, ", ") + ")"
	}
	if k := f.Type.named().Kind; k == "OBJECT" || k == "INTERFACE" || k == "UNION" {
		q += " { __typename }"
	}
	q += " }"
	body := map[string]any{"query": q}
	if !literal {
		body["variables"] = vars
	}
	raw, _ := json.Marshal(body)
	if rawBadUTF8 {
		raw = bytes.ReplaceAll(raw, []byte(badUTF8Marker), []byte("a\xe9b"))
	}
	return s.post(raw)
}

// base is a valid set of arguments of f: the fixture's own where an
// operation needs real ids or a coherent input, and for any other field
// (a new one) its required arguments made from their types.
func (s *probeServer) base(t *testing.T, f introField) map[string]any {
	t.Helper()
	pool := map[string]any{"itemId": s.sku, "name": "probe", "price": "1.00", "quantity": 1,
		"startsAt": "2030-01-01T00:00:00Z", "endsAt": "2030-01-02T00:00:00Z"}
	known := map[string]map[string]any{
		"goods":             {"slug": "demo-tshirt"},
		"category":          {"id": s.category},
		"stockLedger":       {"itemId": s.sku},
		"stockPools":        {"itemId": s.sku},
		"order":             {"orderSn": s.order},
		"cart":              {"id": s.cart},
		"webhookDeliveries": {"webhookId": s.hook},
		"createGoods": {"input": map[string]any{"name": "probe", "specs": []any{map[string]any{"name": "size", "values": []any{"S", "M"}}},
			"defaultSku": map[string]any{"sellPrice": "9.90", "stock": 3},
			"skus":       []any{map[string]any{"values": []any{"S"}, "sellPrice": "9.90"}}}},
		"updateGoods":             {"input": map[string]any{"goodsId": s.goods, "expectedVersion": 0}},
		"createCategory":          {"input": map[string]any{"name": "probe"}},
		"updateCategory":          {"input": map[string]any{"categoryId": s.category}},
		"updateGoodsSpecs":        {"input": map[string]any{"goodsId": s.goods, "expectedVersion": 0, "specs": []any{map[string]any{"name": "size", "values": []any{map[string]any{"name": "S"}}}}}},
		"updateSku":               {"input": map[string]any{"itemId": s.sku, "expectedVersion": 0}},
		"setGoodsStatus":          {"goodsId": s.goods, "status": "ON_SHELF"},
		"setGoodsStockMode":       {"goodsId": s.goods, "mode": "DEDUCT_AT_ORDER"},
		"adjustStock":             {"input": map[string]any{"itemId": s.sku, "delta": 1, "reason": "probe"}},
		"setStock":                {"input": map[string]any{"itemId": s.sku, "stock": 50, "expectedVersion": 0, "reason": "probe"}},
		"stocktake":               {"input": map[string]any{"itemId": s.sku, "countedStock": 50, "reason": "probe"}},
		"createStockPool":         {"input": pool},
		"closeStockPool":          {"poolId": s.pool},
		"placeOrder":              {"input": map[string]any{"items": []any{map[string]any{"itemId": s.sku, "quantity": 1}}}},
		"cancelOrder":             {"orderSn": s.order},
		"paymentReturn":           {"input": map[string]any{"provider": "mock", "paymentId": "probe-payment", "orderSn": s.order}},
		"refundOrder":             {"orderSn": s.order, "reason": "probe"},
		"cartCreate":              {"input": map[string]any{"lines": []any{map[string]any{"itemId": s.sku, "quantity": 1}}}},
		"cartLinesAdd":            {"cartId": s.cart, "lines": []any{map[string]any{"itemId": s.sku, "quantity": 1}}},
		"cartLinesUpdate":         {"cartId": s.cart, "lines": []any{map[string]any{"lineId": "1", "quantity": 1}}},
		"cartLinesRemove":         {"cartId": s.cart, "lineIds": []any{"1"}},
		"cartBuyerIdentityUpdate": {"cartId": s.cart},
		"checkoutCart":            {"cartId": s.cart},
		"createWebhook":           {"input": map[string]any{"url": "https://93.184.216.34/hook", "events": []any{"OrderPaid"}}},
		"updateWebhook":           {"id": s.hook, "input": map[string]any{}},
		"deleteWebhook":           {"id": s.hook},
	}
	if v, ok := known[f.Name]; ok {
		return probeCopy(v).(map[string]any)
	}
	out := map[string]any{}
	for _, a := range f.Args {
		if a.Type.Kind == "NON_NULL" {
			out[a.Name] = s.schema.generate(a.Type)
		}
	}
	return out
}

// The schema as introspection tells it.
type introType struct {
	Kind   string
	Name   string
	OfType *introType
}

func (t *introType) named() *introType {
	for t.OfType != nil {
		t = t.OfType
	}
	return t
}

func (t *introType) String() string {
	switch t.Kind {
	case "NON_NULL":
		return t.OfType.String() + "!"
	case "LIST":
		return "[" + t.OfType.String() + "]"
	}
	return t.Name
}

type introArg struct {
	Name string
	Type *introType
}

type introField struct {
	Name string
	Args []introArg
	Type *introType
}

type introFullType struct {
	Kind        string
	Name        string
	Fields      []introField
	InputFields []introArg
	EnumValues  []struct{ Name string }
}

type introSchema struct {
	roots map[string]string
	types map[string]introFullType
}

const typeRef = `kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`

func (s *probeServer) introspect(t *testing.T) *introSchema {
	t.Helper()
	var r struct {
		Schema struct {
			QueryType, MutationType struct{ Name string }
			Types                   []introFullType
		} `json:"__schema"`
	}
	s.must(t, `{ __schema { queryType { name } mutationType { name } types { kind name
		fields { name type { `+typeRef+` } args { name type { `+typeRef+` } } }
		inputFields { name type { `+typeRef+` } } enumValues { name } } } }`, nil, &r)
	sc := &introSchema{roots: map[string]string{"Query": r.Schema.QueryType.Name, "Mutation": r.Schema.MutationType.Name},
		types: map[string]introFullType{}}
	for _, ty := range r.Schema.Types {
		sc.types[ty.Name] = ty
	}
	s.schema = sc
	return sc
}

// argStep is one argStep of a path into an argument: a field, or index 0 of a list.
type argStep struct {
	key  string
	list bool
}

type slotPath struct {
	path        []argStep
	owner, leaf string // the input type and field the slot is (owner "": the argument itself)
}

func (p slotPath) String() string {
	var b strings.Builder
	for i, s := range p.path {
		switch {
		case s.list:
			b.WriteString("[0]")
		case i > 0:
			b.WriteString("." + s.key)
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// slots are the paths to every scalar (a string on the wire: every scalar
// but Int, Float and Boolean) inside a value of type t.
func (sc *introSchema) slots(t *introType, path []argStep, depth int) []slotPath {
	return sc.slotsIn(t, path, "", path[len(path)-1].key, depth)
}

func (sc *introSchema) slotsIn(t *introType, path []argStep, owner, leaf string, depth int) []slotPath {
	if depth > 6 {
		return nil
	}
	switch t.Kind {
	case "NON_NULL":
		return sc.slotsIn(t.OfType, path, owner, leaf, depth)
	case "LIST":
		return sc.slotsIn(t.OfType, append(append([]argStep{}, path...), argStep{list: true}), owner, leaf, depth)
	case "SCALAR":
		switch t.Name {
		case "Int", "Float", "Boolean":
			return nil
		}
		return []slotPath{{path: path, owner: owner, leaf: leaf}}
	case "INPUT_OBJECT":
		var out []slotPath
		for _, f := range sc.types[t.Name].InputFields {
			out = append(out, sc.slotsIn(f.Type, append(append([]argStep{}, path...), argStep{key: f.Name}), t.Name, f.Name, depth+1)...)
		}
		return out
	}
	return nil
}

// generate makes a value of type t: required input fields only, lists of one.
func (sc *introSchema) generate(t *introType) any {
	switch t.Kind {
	case "NON_NULL":
		return sc.generate(t.OfType)
	case "LIST":
		return []any{sc.generate(t.OfType)}
	case "ENUM":
		return sc.types[t.Name].EnumValues[0].Name
	case "INPUT_OBJECT":
		m := map[string]any{}
		for _, f := range sc.types[t.Name].InputFields {
			if f.Type.Kind == "NON_NULL" {
				m[f.Name] = sc.generate(f.Type)
			}
		}
		return m
	}
	switch t.Name {
	case "Int", "Float":
		return 1
	case "Boolean":
		return false
	case "ID":
		return "1"
	case "Money":
		return "1.00"
	case "Time":
		return "2030-01-01T00:00:00Z"
	}
	return "probe"
}

// setAt returns args with the value at path replaced by v, creating what is
// missing on the way (from the types).
func probeSetAt(sc *introSchema, args map[string]any, defs []introArg, path []argStep, v string) map[string]any {
	var argType *introType
	for _, a := range defs {
		if a.Name == path[0].key {
			argType = a.Type
		}
	}
	args[path[0].key] = sc.setIn(args[path[0].key], argType, path[1:], v)
	return args
}

func (sc *introSchema) setIn(cur any, t *introType, path []argStep, v string) any {
	if t.Kind == "NON_NULL" {
		t = t.OfType
	}
	if len(path) == 0 {
		return v
	}
	if path[0].list {
		l, _ := cur.([]any)
		if len(l) == 0 {
			l = []any{sc.generate(t.OfType)}
		}
		l[0] = sc.setIn(l[0], t.OfType, path[1:], v)
		return l
	}
	m, ok := cur.(map[string]any)
	if !ok {
		m = sc.generate(t).(map[string]any)
	}
	for _, f := range sc.types[t.Name].InputFields {
		if f.Name == path[0].key {
			m[f.Name] = sc.setIn(m[f.Name], f.Type, path[1:], v)
		}
	}
	return m
}

func probeCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = probeCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = probeCopy(e)
		}
		return l
	}
	return v
}

// renderLiteral writes v as a GraphQL literal of type t: a JSON string is
// a valid GraphQL string (its \u0000 is GraphQL's escape too).
func (sc *introSchema) renderLiteral(v any, t *introType) string {
	if t.Kind == "NON_NULL" {
		t = t.OfType
	}
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var ft *introType
			for _, f := range sc.types[t.Name].InputFields {
				if f.Name == k {
					ft = f.Type
				}
			}
			parts = append(parts, k+": "+sc.renderLiteral(x[k], ft))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, sc.renderLiteral(e, t.OfType))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		if t.Kind == "ENUM" {
			return x
		}
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The strings that enter beside the operation: an anonymous product page
// asked for a slug with a NUL (INVALID_INPUT, and no ERROR logged for what
// is the client's mistake), an Idempotency-Key header that is not UTF-8
// or too long (INVALID_INPUT, no order), a GET whose URL carries a byte
// that is not UTF-8, and an X-Request-Id that is not printable ASCII
// (replaced, not echoed).
func TestBadStringsBesideTheOperation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		var logs bytes.Buffer
		prev := slog.Default()
		slog.SetDefault(slog.New(server.LogHandler(slog.NewJSONHandler(&logs, nil))))
		t.Cleanup(func() { slog.SetDefault(prev) })
		s := newProbeServer(t, db)
		do := func(req *http.Request) probeAnswer {
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, req)
			a := probeAnswer{status: w.Code, body: w.Body.String()}
			var r struct {
				Errors []struct{ Extensions map[string]any }
			}
			_ = json.Unmarshal(w.Body.Bytes(), &r)
			if len(r.Errors) > 0 {
				a.code, _ = r.Errors[0].Extensions["code"].(string)
				a.field, _ = r.Errors[0].Extensions["field"].(string)
			}
			return a
		}
		post := func(token, body string, hdr ...string) probeAnswer {
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			return do(req)
		}

		logs.Reset()
		for range 3 {
			if a := post("", `{"query":"{ goods(slug: \"demo\\u0000tshirt\") { id } }"}`); a.code != "INVALID_INPUT" || a.field != "goods.slug" {
				t.Errorf("anonymous goods(slug: \"demo\\u0000tshirt\"): %q %q %s", a.code, a.field, a.body)
			}
		}
		if strings.Contains(logs.String(), `"level":"ERROR"`) {
			t.Errorf("a NUL in a slug logged an ERROR:\n%s", logs.String())
		}

		orders := func() int {
			var n int
			if err := db.SQL.QueryRow("SELECT COUNT(*) FROM orders").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := orders()
		place := `{"query":"mutation($sku: ID!) { placeOrder(input: {items: [{itemId: $sku, quantity: 1}]}) { orderSn } }","variables":{"sku":"` + s.sku + `"}}`
		for _, key := range []string{"key-\xe9", "key-\x7f", strings.Repeat("k", 256)} {
			if a := post(s.admin, place, "Idempotency-Key", key); a.code != "INVALID_INPUT" || a.field != "Idempotency-Key header" {
				t.Errorf("Idempotency-Key %q: %q %q %s", key, a.code, a.field, a.body)
			}
		}
		if n := orders(); n != before {
			t.Errorf("refused keys placed %d orders", n-before)
		}
		if a := post(s.admin, place, "Idempotency-Key", strings.Repeat("k", 255)); a.code != "" {
			t.Errorf("a key of 255 bytes: %q %s", a.code, a.body)
		}
		if a := post(s.admin, place, "Idempotency-Key", "clé-"+strings.Repeat("k", 200)); a.code != "" {
			t.Errorf("a UTF-8 key: %q %s", a.code, a.body)
		}

		get := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`query($s: String) { goods(slug: $s) { id } }`)+"&variables=%7B%22s%22%3A%22a%E9b%22%7D", nil)
		if a := do(get); a.code != "INVALID_INPUT" || a.field != "variables.s" {
			t.Errorf("GET with %%E9 in a variable: %q %q %s", a.code, a.field, a.body)
		}

		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Header.Set("X-Request-Id", "trace-\xe9")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, req)
		if id := w.Header().Get("X-Request-Id"); strings.Contains(id, "\xe9") || id == "" {
			t.Errorf("X-Request-Id echoed as %q", id)
		}
	})
}
