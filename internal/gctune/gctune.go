// Package gctune sets the garbage collector's target of a serving process.
package gctune

import (
	"os"
	"runtime/debug"
)

// DefaultPercent is serve's GC target (what GOGC sets) when the environment
// sets none.
//
// Serving checkout, the live heap is small (about 5 MB in the benchmark, plus
// the catalog's cache, at most --cache-max-cost) while a flash sale allocates
// about 17 KB per order over HTTP. At Go's default of 100 that made 33
// collections a second, about a tenth of a 2-core machine
// (docs/benchmarks.md). At 400 the heap grows to five times what is live
// before a collection, so there are about a quarter as many; the price is
// memory, bounded by GOMEMLIMIT where one is set (docs/operations.md).
const DefaultPercent = 400

// Apply makes percent the GC target unless GOGC is set in the environment
// (the runtime has applied that one already), and returns the target in
// force and where it came from.
func Apply(percent int) (int, string) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p, "GOGC"
	}
	debug.SetGCPercent(percent)
	return percent, "default"
}
