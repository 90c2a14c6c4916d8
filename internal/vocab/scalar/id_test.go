package scalar

import (
	"encoding/json"
	"errors"
	"testing"
)

// One row has one spelling: only the canonical decimal is an id, so one
// goods has one response-cache key per selection (issue 25).
func TestUnmarshalInt64ID(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
	}{
		{"1", 1}, {"3", 3}, {"9223372036854775807", 1<<63 - 1}, {json.Number("42"), 42}, {int64(7), 7}, {8, 8},
	} {
		if got, err := UnmarshalInt64ID(tc.in); err != nil || got != tc.want {
			t.Errorf("UnmarshalInt64ID(%#v) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{
		"abc", "", "0", "-1", "03", "+3", " 1", "1 ", "1\n", "0x1", "1_000", "1e3", "9223372036854775808",
		json.Number("03"), json.Number("+3"), int64(0), -2, 1.5,
	} {
		if _, err := UnmarshalInt64ID(bad); !errors.Is(err, ErrInvalidID) {
			t.Errorf("UnmarshalInt64ID(%#v) error = %v, want ErrInvalidID", bad, err)
		}
	}
}
