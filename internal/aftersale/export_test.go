package aftersale

import "time"

// SetClock replaces the clock (tests of the window).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// UnguardWholeRefund makes refundOrder hold any units of an order in any
// state, as it did before its guards, until the returned function runs.
func UnguardWholeRefund() (restore func()) {
	unguardedWhole = true
	return func() { unguardedWhole = false }
}
