package proccpu

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestListeningFindsThisProcess(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if got := Listening(port); got != os.Getpid() {
		t.Errorf("Listening(%d) = %d, want this process %d", port, got, os.Getpid())
	}
	l.Close()
	if got := Listening(port); got != 0 {
		t.Errorf("Listening(%d) after close = %d, want 0", port, got)
	}
}

func TestNamedAndMachineCountWork(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	m0, n0 := Machine(), Named(strings.TrimSpace(string(comm)))
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	m1, n1 := Machine(), Named(strings.TrimSpace(string(comm)))
	if n1 <= n0 || m1 <= m0 {
		t.Errorf("after 100 ms of spinning: Named %v → %v, Machine %v → %v; want both to grow", n0, n1, m0, m1)
	}
	if Named("no-such-command-here") != 0 {
		t.Error("Named of a command no process has is not 0")
	}
}
