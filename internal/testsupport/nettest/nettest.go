// Package nettest holds what tests that start a real listener share.
package nettest

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address with a port free a moment ago, for a
// server under test whose address must be known before it starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
