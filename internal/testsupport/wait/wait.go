// Package wait waits in tests for a condition that something running
// beside the test makes true, with a deadline: a broken path fails with
// what it waited for instead of hanging until go test's timeout.
package wait

import (
	"testing"
	"time"
)

// Limit is how long For waits.
const Limit = 10 * time.Second

// For polls cond every millisecond until it holds, failing the test with
// what it waited for after Limit: a condition in process, cheap to read.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll(t, what, Limit, time.Millisecond, cond)
}

// Within polls cond every 50 ms until it holds, failing the test after
// limit: a condition read across a process boundary (the binary's HTTP, a
// stream), each read a round trip.
func Within(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	poll(t, what, limit, 50*time.Millisecond, cond)
}

func poll(t testing.TB, what string, limit, every time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(every) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting until %s", limit, what)
		}
	}
}
