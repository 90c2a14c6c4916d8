package catalog

import (
	"context"
	"runtime"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// What an answer was built from stops being current when the goods is
// edited through this instance, and it does not keep the replaced view
// alive: a response cache full of old answers must not pin old views,
// whose memory neither cache's bound counts.
func TestSourcesDoNotPinViews(t *testing.T) {
	ctx := context.Background()
	s := New(testdb.Open(t, testdb.SQLite), DefaultConfig())
	t.Cleanup(s.Close)
	g, err := s.Create(ctx, CreateInput{Name: "弱引用", Code: "WEAK", Status: enums.GoodsOnShelf,
		Specs: []SpecInput{{Name: "颜色", Values: []string{"红", "蓝"}}}, DefaultSku: SkuTerms{SellPrice: money.MustParse("10.00"), Stock: 5}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, rs := WithReadSet(ctx)
	old, err := s.Goods(rctx, Viewer{}, g.ID)
	if err != nil || old == nil {
		t.Fatal(old, err)
	}
	src, ok := rs.Sources()
	if !ok || src.Len() != 1 || !s.Current(src) {
		t.Fatalf("fresh sources: ok %v, %d reads, current %v", ok, src.Len(), s.Current(src))
	}
	sku := old.SkuList(false)[0]
	price := money.MustParse("11.00")
	if _, err := s.UpdateSku(ctx, UpdateSkuInput{ItemID: sku.ID, ExpectedVersion: sku.Version, SellPrice: &price}); err != nil {
		t.Fatal(err)
	}
	if s.Current(src) {
		t.Fatal("sources read before an edit through this instance are still current")
	}
	if g2, _ := s.Goods(ctx, Viewer{}, g.ID); g2 == old || g2.SkuList(false)[0].SellPrice != price {
		t.Fatal("the edit did not replace the cached view")
	}
	collected := make(chan struct{})
	runtime.AddCleanup(old, func(struct{}) { close(collected) }, struct{}{})
	old, sku, g = nil, nil, nil
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		select {
		case <-collected:
			if s.Current(src) {
				t.Error("sources whose view was collected are current")
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the replaced view was never collected: the sources keep it alive")
		}
	}
}
