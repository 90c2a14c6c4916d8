package checkout

import (
	"testing"
	"time"

	"storefront/internal/testsupport/wait"
)

// The writer goes to the main lane's waiters first (a batch of ordinary
// orders waits for at most the flash sale's batch holding it), but to a
// waiting pool batch once burst main batches held it in a row.
func TestWriterServesMainFirstWithinBurst(t *testing.T) {
	w := writer{burst: 2}
	w.lock(poolLane)
	got := make(chan string, 4)
	queued := func(lane, n int) func() bool {
		return func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.waiting[lane]) == n }
	}
	take := func(name string, lane int) {
		go func() { w.lock(lane); got <- name; w.unlock() }()
	}
	take("pool 2", poolLane)
	wait.For(t, "the second pool batch waits", queued(poolLane, 1))
	for i, name := range []string{"main a", "main b", "main c"} {
		take(name, 0)
		wait.For(t, name+" waits", queued(0, i+1))
	}
	w.unlock()
	var order []string
	for range 4 {
		select {
		case n := <-got:
			order = append(order, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("a waiter never got the writer; so far %v", order)
		}
	}
	want := []string{"main a", "main b", "pool 2", "main c"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("writer handed over as %v, want %v", order, want)
		}
	}
	if !w.tryLock(0) {
		t.Errorf("the writer is still busy after every waiter unlocked")
	}
}
