package settings

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, time.Second}, {-time.Minute, time.Second}, {time.Millisecond, time.Millisecond},
	} {
		got := c.in
		Positive(&got, time.Second)
		if got != c.want {
			t.Errorf("Positive(%v, 1s) = %v, want %v", c.in, got, c.want)
		}
	}
	n := 7
	Positive(&n, 3)
	if n != 7 {
		t.Errorf("Positive(7, 3) = %d, want 7", n)
	}
}
