package outbox

import (
	"context"
	"time"
)

// MaxBackoff is the longest a failing lane waits between passes (unless
// its interval is longer): a broker that comes back is used again within
// it, and a broker that stays down costs a pass (a claim, a release, a
// log line) at most this often.
const MaxBackoff = 10 * time.Second

// LaneConfig is how RunLane paces a lane.
type LaneConfig struct {
	Interval time.Duration // between passes while the sink takes events
	Batch    int           // rows per claim
	// OnPass, when set, is told each pass's rows marked done and its error.
	OnPass func(n int, err error)
	// Wait waits d or until ctx ends (false then); nil: a timer. Tests
	// record the waits instead.
	Wait func(ctx context.Context, d time.Duration) bool
}

// RunLane dispatches lane to sink until ctx ends: a pass (DrainLane) every
// Interval while passes succeed. After a failing pass the lane waits twice
// as long as before, from 2 × Interval up to MaxBackoff, and a pass that
// succeeds brings it back to Interval. Each lane runs on its own: a lane
// that fails and waits holds no other lane (and its claims are released
// after each failing pass, so the rows wait only for this lane's sink).
func (d *Dispatcher) RunLane(ctx context.Context, lane Lane, sink BatchSink, cfg LaneConfig) {
	wait := cfg.Wait
	if wait == nil {
		wait = sleep
	}
	failed := 0
	for {
		n, err := d.DrainLane(ctx, lane, sink, cfg.Batch)
		if cfg.OnPass != nil && ctx.Err() == nil {
			cfg.OnPass(n, err)
		}
		if err != nil {
			failed++
		} else {
			failed = 0
		}
		if !wait(ctx, Backoff(cfg.Interval, failed)) {
			return
		}
	}
}

// Backoff is how long a lane waits after failed failing passes in a row:
// interval when none failed, then doubling from 2 × interval, capped at
// MaxBackoff (or at interval, when that is longer).
func Backoff(interval time.Duration, failed int) time.Duration {
	ceiling := max(MaxBackoff, interval)
	d := interval
	for range failed {
		if d >= ceiling/2 {
			return ceiling
		}
		d *= 2
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
