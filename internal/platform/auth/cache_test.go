package auth

import (
	"testing"
	"time"
)

// A verified token is answered from the cache only until it expires.
func TestVerifiedTokenExpiresInTheCache(t *testing.T) {
	s, err := NewSigner("a-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.now = func() time.Time { return now }
	tok, err := s.Issue("7", Customer, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second answer comes from the cache
		if p, err := s.Verify(tok); err != nil || p.UserID != "7" || p.Role != Customer {
			t.Fatalf("Verify = %+v, %v", p, err)
		}
	}
	if s.verified.Len() != 1 {
		t.Fatalf("cached tokens = %d, want 1", s.verified.Len())
	}
	now = now.Add(2 * time.Minute)
	if p, err := s.Verify(tok); err == nil {
		t.Fatalf("an expired token was accepted from the cache as %+v", p)
	}
	if s.verified.Len() != 0 {
		t.Errorf("cached tokens = %d after expiry, want 0", s.verified.Len())
	}
}
