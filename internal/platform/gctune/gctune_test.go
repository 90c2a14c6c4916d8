package gctune

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // what the runtime did with it at start
	if p, from := Apply(DefaultPercent); p != 150 || from != "GOGC" || debug.SetGCPercent(150) != 150 {
		t.Errorf("with GOGC=150: Apply = %d from %s; want GOGC's 150 kept", p, from)
	}

	t.Setenv("GOGC", "")
	if p, from := Apply(DefaultPercent); p != 150 || from != "GOGC" {
		t.Errorf("with GOGC set empty: Apply = %d from %s; want the runtime's value kept", p, from)
	}
}

func TestApplyDefault(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "") // restored after the test…
	os.Unsetenv("GOGC")  // …which runs without it
	if p, from := Apply(DefaultPercent); p != DefaultPercent || from != "default" || debug.SetGCPercent(DefaultPercent) != DefaultPercent {
		t.Errorf("Apply = %d from %s; want %d from default, in force", p, from, DefaultPercent)
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	if l, from := ApplyMemoryLimit(200 << 20); l != 200<<20 || from != "default" || debug.SetMemoryLimit(-1) != 200<<20 {
		t.Errorf("ApplyMemoryLimit(200 MiB) = %d from %s, in force %d", l, from, debug.SetMemoryLimit(-1))
	}
	if l, from := ApplyMemoryLimit(0); l != 0 || from != "default" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("ApplyMemoryLimit(0) = %d from %s, in force %d; want no limit", l, from, debug.SetMemoryLimit(-1))
	}

	t.Setenv("GOMEMLIMIT", "300MiB")
	debug.SetMemoryLimit(300 << 20) // what the runtime did with it at start
	if l, from := ApplyMemoryLimit(200 << 20); l != 300<<20 || from != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Errorf("with GOMEMLIMIT=300MiB: ApplyMemoryLimit = %d from %s; want GOMEMLIMIT's kept", l, from)
	}
}

func TestDefaultMemoryLimit(t *testing.T) {
	// serve's default caches: product views 64 MiB, responses 64 MiB, two
	// query caches of 16 MiB.
	if got := DefaultMemoryLimit(160 << 20); got != 208<<20 {
		t.Errorf("DefaultMemoryLimit(160 MiB) = %d MiB, want 208", got>>20)
	}
}
