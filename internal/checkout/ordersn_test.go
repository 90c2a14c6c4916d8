package checkout

import (
	"strings"
	"testing"
	"time"
)

// Order numbers: the UTC time to the second, then 12 random digits that
// do not repeat and use every digit in every place.
func TestOrderSnShape(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 4, 5, 0, time.FixedZone("CST", 8*3600))
	seen := map[string]bool{}
	var used [12][10]bool
	for range 10_000 {
		sn := newOrderSn(now)
		if len(sn) != 26 || !strings.HasPrefix(sn, "20261129190405") {
			t.Fatalf("order number %q: want 26 characters starting with the UTC time 20261129190405", sn)
		}
		for i, c := range sn[14:] {
			if c < '0' || c > '9' {
				t.Fatalf("order number %q has a non-digit", sn)
			}
			used[i][c-'0'] = true
		}
		if seen[sn] {
			t.Fatalf("order number %q drawn twice in 10,000", sn)
		}
		seen[sn] = true
	}
	for i, ds := range used {
		for d, ok := range ds {
			if !ok {
				t.Errorf("random place %d never drew digit %d in 10,000 numbers", i, d)
			}
		}
	}
}
