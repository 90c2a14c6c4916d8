package skumatrix

import "testing"

// BenchmarkSelectable compares the bitset Index with the seed's map-based
// algorithm on the same goods and selection. Both get their per-snapshot input
// (avail bitset / list of available SKUs) prepared outside the loop; the seed
// builds its postings inside every call, as it is written.
func BenchmarkSelectable(b *testing.B) {
	dims500, skus500, stock500 := goods500(b)
	for _, g := range []struct {
		name  string
		dims  [][]int64
		skus  []SKU
		stock []int64
		sel   []int64
	}{
		{"tshirt12", tshirtDims, tshirtSKUs(b), tshirtStock, []int64{2}},
		{"goods500", dims500, skus500, stock500, []int64{2, 13}},
	} {
		b.Run(g.name, func(b *testing.B) {
			b.Run("bitset", func(b *testing.B) {
				ix, err := NewIndex(g.dims, g.skus)
				if err != nil {
					b.Fatal(err)
				}
				avail := ix.Avail(stockFunc(g.stock))
				out := make([]bool, 0, len(ix.Values()))
				b.ReportAllocs()
				for b.Loop() {
					if out, err = ix.Selectable(avail, g.sel, out); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("seedmap", func(b *testing.B) {
				avail, valueToDim := seedInput(g.dims, g.skus, g.stock)
				b.ReportAllocs()
				for b.Loop() {
					if m := buildSelectableMatrix(avail, valueToDim, g.sel); len(m) == 0 {
						b.Fatal("empty matrix")
					}
				}
			})
		})
	}
}
