// Package must stops a test at an error it cannot go on from.
package must

import "testing"

// NoErr fails the test at once when err is not nil.
func NoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
