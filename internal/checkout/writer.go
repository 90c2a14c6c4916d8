package checkout

import "sync"

// writer is SQLite's one writer as the group path's batches take it: a
// lock whose waiters are served the shop's ordinary orders (the main lane)
// first, but a stock pool's batch after at most burst main batches in a
// row. With a plain mutex a flash sale's batches (the pool lane) took the
// writer again and again while a batch of ordinary orders waited behind
// them; taken in turn, the main lane's second batch in flight waited for
// two pool batches. Now an ordinary batch waits for at most the one pool
// batch holding the writer, and a pool batch for at most burst main ones.
type writer struct {
	mu      sync.Mutex
	busy    bool
	burst   int                    // main batches a waiting pool batch lets go first
	last    int                    // the lane that held it last
	mains   int                    // main batches in a row that held it
	waiting [lanes][]chan struct{} // per lane, in arrival order
}

// lock takes the writer for a batch of lane, waiting for its turn.
func (w *writer) lock(lane int) {
	w.mu.Lock()
	if !w.busy {
		w.took(lane)
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
	w.took(lane)
	return true
}

// took records that lane holds the writer (w.mu held).
func (w *writer) took(lane int) {
	w.busy = true
	switch {
	case lane == poolLane:
		w.mains = 0
	case w.last == poolLane:
		w.mains = 1
	default:
		w.mains++
	}
	w.last = lane
}

// unlock hands the writer to the first waiter of the main lane, or of the
// pool lane once burst main batches held it in a row or none waits; else
// it frees it.
func (w *writer) unlock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	order := [lanes]int{0, poolLane}
	if w.mains >= w.burst {
		order = [lanes]int{poolLane, 0}
	}
	for _, lane := range order {
		if q := w.waiting[lane]; len(q) > 0 {
			w.waiting[lane] = q[1:]
			w.took(lane)
			close(q[0]) // the writer passes to it, still busy
			return
		}
	}
	w.busy = false
}
