package server

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestByteLRU(t *testing.T) {
	ctx := context.Background()
	c := newByteLRU(6400, func(_ string, v string) int64 { return int64(len(v)) })
	c.Add(ctx, "a", strings.Repeat("a", 100))
	c.Add(ctx, "b", strings.Repeat("b", 100))
	c.Add(ctx, "big", strings.Repeat("x", 101)) // over a 64th of the bound: not kept
	if _, ok := c.Get(ctx, "big"); ok {
		t.Error("an entry over a 64th of the bound was kept")
	}
	if _, ok := c.Get(ctx, "a"); !ok { // a is now the most recently used
		t.Fatal("a is missing")
	}
	for i := range 63 { // 6500 bytes offered
		c.Add(ctx, fmt.Sprint(i), strings.Repeat("c", 100))
	}
	if got := c.bytes(); got > 6400 {
		t.Errorf("holds %d bytes over a bound of 6400", got)
	}
	if _, ok := c.Get(ctx, "b"); ok {
		t.Error("b, the least recently used, was not evicted first")
	}
	if _, ok := c.Get(ctx, "a"); !ok {
		t.Error("a, used after b, was evicted before it")
	}
	c.Add(ctx, "a", strings.Repeat("a", 10)) // replacing an entry recharges it
	if got := c.bytes(); got != 6400-90 {
		t.Errorf("after replacing a: %d bytes, want %d", got, 6400-90)
	}
}

// docCost is an estimate; it must not be below what a parsed document
// really keeps on the heap (beyond its text, which the caller holds).
func TestDocCostCoversTheHeap(t *testing.T) {
	aliases := func() string {
		var b strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&b, " a%d: goods(id: %d) { skus { id specValueStr sellPrice stock } }", i, i)
		}
		return "{" + b.String() + " }"
	}
	for name, q := range map[string]string{
		"tiny":      `{ __typename }`,
		"page":      `query($id: ID!, $sel: [ID!]) { goods(id: $id) { id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status } priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }`,
		"dense":     "{ goods(id: 1) { " + strings.Repeat("name ", 5000) + "} }",
		"aliases":   aliases(),
		"arguments": "{ goods(id: 1) { " + strings.Repeat(`skuBySelection(specValueIds: ["1", "2", "3", "4"]) { id } `, 1000) + "} }",
		"comment":   "{ __typename } #" + strings.Repeat("x", 100_000),
		"fragments": "{ goods(id: 1) { ...A } } fragment A on Goods { id ...B } fragment B on Goods { name @include(if: true) }",
	} {
		const n = 10
		docs := make([]*ast.QueryDocument, n)
		before := heap()
		for i := range docs {
			doc, err := parser.ParseQuery(&ast.Source{Input: q})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			docs[i] = doc
		}
		perDoc := int64(heap()-before) / n
		if est := docCost(q, docs[0]) - int64(len(q)); est < perDoc {
			t.Errorf("%s: docCost estimates %d bytes beyond the text, a parse keeps %d", name, est, perDoc)
		}
		runtime.KeepAlive(docs)
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
