package checkout

import (
	"testing"
	"time"
)

// The writer passes from a lane to the other lane's first waiter before
// its own lane's: a batch of ordinary orders waits for at most one batch of
// the flash sale.
func TestWriterTakesLanesInTurn(t *testing.T) {
	var w writer
	w.lock(1)
	got := make(chan string, 3)
	queued := func(lane, n int) func() bool {
		return func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.waiting[lane]) == n }
	}
	take := func(name string, lane int) {
		go func() { w.lock(lane); got <- name; w.unlock() }()
	}
	take("pool 2", 1)
	waitFor(t, "the second pool batch waits", queued(1, 1))
	take("pool 3", 1)
	waitFor(t, "the third pool batch waits", queued(1, 2))
	take("main", 0)
	waitFor(t, "the main-stock batch waits", queued(0, 1))
	w.unlock()
	var order []string
	for range 3 {
		select {
		case n := <-got:
			order = append(order, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("a waiter never got the writer; so far %v", order)
		}
	}
	if order[0] != "main" || order[1] != "pool 2" || order[2] != "pool 3" {
		t.Errorf("writer handed over as %v, want [main pool 2 pool 3]", order)
	}
	if !w.tryLock(0) {
		t.Errorf("the writer is still busy after every waiter unlocked")
	}
}
