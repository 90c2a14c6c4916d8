package paging

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestSize(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 0}, {1, 1}, {100, 100}, {101, 100}, {5000, 100}} {
		if got, err := Size(tc.in); err != nil || got != tc.want {
			t.Errorf("Size(%d) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := Size(-1); !errors.Is(err, ErrInvalid) {
		t.Errorf("Size(-1) error = %v, want ErrInvalid", err)
	}
}

// An absent first is the default page; first: 0 is no rows (issue 25:
// goodsList(first: 0) answered 20 edges).
func TestFirst(t *testing.T) {
	p := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		in   *int64
		want int
	}{{nil, Default}, {p(0), 0}, {p(5), 5}, {p(1 << 40), Max + 1}, {p(-3), -1}, {p(-1 << 62), -1}} {
		if got := First(tc.in); got != tc.want {
			t.Errorf("First(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCursorRoundTripAndKinds(t *testing.T) {
	c := Cursor("goods", 42)
	if id, err := Decode("goods", c); err != nil || id != 42 {
		t.Errorf("Decode(goods, Cursor(goods, 42)) = %d, %v", id, err)
	}
	for _, bad := range []string{Cursor("order", 42), "!!", "", "Z29vZHM6eA"} {
		if _, err := Decode("goods", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(goods, %q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestTrim(t *testing.T) {
	rows, more := Trim([]int{1, 2, 3}, 2)
	if len(rows) != 2 || !more {
		t.Errorf("Trim(3 rows, 2) = %v, %v", rows, more)
	}
	rows, more = Trim([]int{1, 2}, 2)
	if len(rows) != 2 || more {
		t.Errorf("Trim(2 rows, 2) = %v, %v", rows, more)
	}
}

// Only the cursor Cursor makes decodes: `01`, `+1` and other spellings of
// one id (and base64 with stray trailing bits) are refused, so one page has
// one cursor and one response-cache entry (issue 25 review).
func TestDecodeAcceptsOnlyTheCanonicalCursor(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	if id, err := Decode("goods", enc("goods:1")); err != nil || id != 1 {
		t.Fatalf("the canonical cursor: %d, %v", id, err)
	}
	for _, bad := range []string{enc("goods:01"), enc("goods:+1"), enc("goods:-0"), enc("goods:00"), enc("goods:1") + "=", "Z29vZHM6MR"} {
		if _, err := Decode("goods", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(goods, %q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

// A row's entry cursor round-trips, and only CursorAt's own spelling of it
// (and of its kind) decodes.
func TestCursorAtRoundTripAndCanonical(t *testing.T) {
	c := CursorAt("delivery", 42, 7)
	if id, i, err := DecodeAt("delivery", c); err != nil || id != 42 || i != 7 {
		t.Errorf("DecodeAt(delivery, CursorAt(delivery, 42, 7)) = %d, %d, %v", id, i, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, bad := range []string{CursorAt("order", 42, 7), Cursor("delivery", 42), enc("delivery:42.07"), enc("delivery:42.-1"),
		enc("delivery:+42.7"), enc("delivery:42."), enc("delivery:.7"), "", "!!"} {
		if _, _, err := DecodeAt("delivery", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeAt(delivery, %q) error = %v, want ErrInvalid", bad, err)
		}
	}
}
