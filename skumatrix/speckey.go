// Package skumatrix holds the pure spec/SKU algorithms of a goods: normalised
// spec keys, the backend-side cartesian product of spec dimensions, and the
// "which spec values are still selectable" matrix for the product page
// (seed 003, sections 4.1–4.3).
//
// It imports only the standard library so that catalog, checkout and the
// resolvers can share one implementation without dragging in the database.
package skumatrix

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SpecKey returns the normalised key of a spec value combination: the ids
// sorted ascending numerically and joined with "_" ([35 12] -> "12_35").
// Sorting makes the key independent of the order in which a user clicked the
// buttons, so one combination can never be stored, cached or logged under two
// spellings. The empty combination (single-spec goods' default SKU) is "".
func SpecKey(valueIDs []int64) string {
	if len(valueIDs) == 0 {
		return ""
	}
	// Sort a copy: callers often pass request data they still log or echo back.
	ids := slices.Clone(valueIDs)
	slices.Sort(ids)
	buf := make([]byte, 0, len(ids)*8)
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, '_')
		}
		buf = strconv.AppendInt(buf, id, 10)
	}
	return string(buf)
}

// parseSpecKey is the inverse of SpecKey. It accepts only keys SpecKey can
// produce: every part a canonical base-10 int64 (no "+", no leading zeros, no
// "-0") and the parts in non-decreasing order. Rejecting non-canonical
// spellings such as "35_12" keeps the key a unique identifier; duplicate ids
// ("12_12") are accepted because SpecKey produces them — whether they form a
// valid SKU is for NewIndex / ValidateSelection to decide. "" parses to no ids.
func parseSpecKey(key string) ([]int64, error) {
	if key == "" {
		return nil, nil
	}
	ids := make([]int64, 0, strings.Count(key, "_")+1)
	for part := range strings.SplitSeq(key, "_") {
		if part == "" {
			return nil, fmt.Errorf("skumatrix: malformed spec key %s: empty part", quoteShort(key))
		}
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("skumatrix: malformed spec key %s: part %s is not an int64", quoteShort(key), quoteShort(part))
		}
		if strconv.FormatInt(id, 10) != part {
			return nil, fmt.Errorf("skumatrix: malformed spec key %s: part %s is not canonical", quoteShort(key), quoteShort(part))
		}
		if n := len(ids); n > 0 && ids[n-1] > id {
			return nil, fmt.Errorf("skumatrix: malformed spec key %s: %d after %d, ids must be sorted ascending", quoteShort(key), id, ids[n-1])
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// quoteShort quotes s for an error message, truncated because spec keys can
// come straight from a request and errors end up in logs.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}
