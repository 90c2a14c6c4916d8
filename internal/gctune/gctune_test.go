package gctune

import (
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
