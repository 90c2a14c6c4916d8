package skumatrix

import (
	"fmt"
	"maps"
)

// seedSKU is the seed's ['item_id' => …, 'value_ids' => […]].
type seedSKU struct {
	itemID   int
	valueIDs []int64
}

// buildSelectableMatrix is the seed's PHP (seed 003, section 4.3) ported line
// by line, hash maps and all, as the oracle the bitset Index must agree with.
// skus are the available SKUs only; values absent from every available SKU get
// no entry (read as false), as in the seed.
func buildSelectableMatrix(skus []seedSKU, valueToDim map[int64]string, selected []int64) map[int64]bool {
	// 1. Inverted index: value => set of available SKUs (keyed by item_id, so deduplicated).
	posting := map[int64]map[int]bool{}
	for _, sku := range skus {
		for _, vid := range sku.valueIDs {
			if posting[vid] == nil {
				posting[vid] = map[int]bool{}
			}
			posting[vid][sku.itemID] = true
		}
	}

	// 2. Selected values by dimension.
	selectedByDim := map[string]int64{}
	for _, vid := range selected {
		selectedByDim[valueToDim[vid]] = vid
	}

	// 3. Probe each value: replace its own dimension, keep the others.
	matrix := map[int64]bool{}
	for vid := range posting {
		probe := maps.Clone(selectedByDim) // PHP arrays are copied on assignment
		probe[valueToDim[vid]] = vid

		var hit map[int]bool
		first := true // PHP's $hit === null
		for _, pid := range probe {
			set := posting[pid] // nil map for a missing key: PHP's ?? []
			if first {
				hit = set
				first = false
			} else {
				hit = arrayIntersectKey(hit, set)
			}
			if len(hit) == 0 {
				break
			}
		}
		matrix[vid] = len(hit) != 0
	}
	return matrix
}

// arrayIntersectKey is PHP's array_intersect_key for two sets: a new array, the
// inputs untouched.
func arrayIntersectKey(a, b map[int]bool) map[int]bool {
	out := map[int]bool{}
	for k, v := range a {
		if _, ok := b[k]; ok {
			out[k] = v
		}
	}
	return out
}

// seedInput converts the Index's inputs into the seed's: available SKUs only
// (enabled and stock > 0, item_id = position) and value => dimension name.
func seedInput(dims [][]int64, skus []SKU, stock []int64) ([]seedSKU, map[int64]string) {
	var avail []seedSKU
	for pos, sku := range skus {
		if sku.Enabled && stock[pos] > 0 {
			avail = append(avail, seedSKU{itemID: pos, valueIDs: sku.ValueIDs})
		}
	}
	valueToDim := map[int64]string{}
	for d, vals := range dims {
		for _, v := range vals {
			valueToDim[v] = fmt.Sprintf("dim%d", d)
		}
	}
	return avail, valueToDim
}

// oracleSelectable runs the seed's algorithm and lays the answer out like
// Index.Selectable's out (dimension order, then value order).
func oracleSelectable(dims [][]int64, skus []SKU, stock []int64, selected []int64) []bool {
	avail, valueToDim := seedInput(dims, skus, stock)
	m := buildSelectableMatrix(avail, valueToDim, selected)
	var out []bool
	for _, vals := range dims {
		for _, v := range vals {
			out = append(out, m[v])
		}
	}
	return out
}
