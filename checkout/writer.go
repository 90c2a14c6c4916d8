package checkout

import "sync"

// writer is SQLite's one writer as the group path's batches take it: a
// lock whose waiters are served lane by lane in turn. With a plain mutex a
// flash sale's batches (the pool lane) took the writer again and again
// while a batch of the shop's ordinary orders waited behind them; in turn,
// an ordinary batch waits for at most one pool batch, and the other way
// round.
type writer struct {
	mu      sync.Mutex
	busy    bool
	last    int                    // the lane that held it last
	waiting [lanes][]chan struct{} // per lane, in arrival order
}

// lock takes the writer for a batch of lane, waiting for its turn.
func (w *writer) lock(lane int) {
	w.mu.Lock()
	if !w.busy {
		w.busy, w.last = true, lane
		w.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	w.waiting[lane] = append(w.waiting[lane], turn)
	w.mu.Unlock()
	<-turn
}

// tryLock takes the writer for lane if it is free.
func (w *writer) tryLock(lane int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy {
		return false
	}
	w.busy, w.last = true, lane
	return true
}

// unlock hands the writer to the first waiter of the other lane, else of
// the same lane, else frees it.
func (w *writer) unlock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, lane := range [lanes]int{1 - w.last, w.last} {
		if q := w.waiting[lane]; len(q) > 0 {
			w.waiting[lane] = q[1:]
			w.last = lane
			close(q[0]) // the writer passes to it, still busy
			return
		}
	}
	w.busy = false
}
