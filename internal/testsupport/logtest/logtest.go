// Package logtest is test support: it captures what the code under test
// logs through slog's default logger, from any goroutine.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// Buffer collects log lines written from several goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Capture sends slog's default logger (level INFO, text) to a buffer for
// the rest of the test.
func Capture(t testing.TB) *Buffer {
	t.Helper()
	b := &Buffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(b, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return b
}
