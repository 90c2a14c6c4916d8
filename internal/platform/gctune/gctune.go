// Package gctune sets the garbage collector's target and the soft memory
// limit of a serving process.
package gctune

import (
	"math"
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

// MemoryHeadroom is what DefaultMemoryLimit adds to the caches' bounds: the
// rest of serving (request buffers, the goroutines of a few hundred
// connections, the runtime's own structures) and room for the collector, so
// that a server with full caches collects about once a second instead of
// without pause. Under a flood of distinct anonymous requests the live heap is 90-115 MB beside
// the caches' 160 MiB bound, and RSS is the limit plus about 17 MiB the
// limit does not count (the binary's text and data): 48 MiB keeps a default
// server within 256 MB (docs/benchmarks.md).
const MemoryHeadroom = 48 << 20

// DefaultMemoryLimit is serve's soft memory limit when none is given: the
// sum of the caches' bounds (cacheBytes) plus MemoryHeadroom.
//
// At --gc-percent 400 the heap grows to five times what is live before a
// collection, and with full caches that is far more than the machine may
// have: a flood of distinct anonymous requests takes the server from
// 36 MB to about 500 MB of RSS with every cache within its bound.
// A limit makes the collector run earlier as the heap nears it, so the
// caches' bounds, and not the GC target, decide the ceiling; below it GC
// runs as rarely as 400 lets it. (Go gives the collector at most about half
// the CPU near the limit, so a live heap above it degrades speed, not
// correctness: the limit is soft.)
func DefaultMemoryLimit(cacheBytes int64) int64 {
	return cacheBytes + MemoryHeadroom
}

// ApplyMemoryLimit makes limit (bytes; 0: none) the runtime's soft memory
// limit unless GOMEMLIMIT is set in the environment (the runtime has applied
// that one already), and returns the limit in force (0: none) and where it
// came from.
func ApplyMemoryLimit(limit int64) (int64, string) {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return inForce(debug.SetMemoryLimit(-1)), "GOMEMLIMIT"
	}
	if limit <= 0 {
		limit = math.MaxInt64 // the runtime's "no limit"
	}
	debug.SetMemoryLimit(limit)
	return inForce(limit), "default"
}

func inForce(limit int64) int64 {
	if limit == math.MaxInt64 {
		return 0
	}
	return limit
}
