package scalar

import (
	"errors"
	"testing"
	"time"
)

// A Time argument is an instant every backend stores exactly: UTC, to the
// microsecond, in years 1000 to 9999 (MySQL's DATETIME(6)). Past TIMESTAMP's
// 2038 and before 1970 are in; anything outside is ErrInvalidTime.
func TestUnmarshalTime(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"},
		{"2038-01-19T03:14:08Z", "2038-01-19T03:14:08Z"},
		{"1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"},
		{"1000-01-01T00:00:00Z", "1000-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"},
		{"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.999999Z"},
		{"2026-12-01T18:00:00.1234567+08:00", "2026-12-01T10:00:00.123456Z"},
		{"1000-01-01T08:00:00+08:00", "1000-01-01T00:00:00Z"},
	} {
		got, err := UnmarshalTime(tc.in)
		if err != nil || got.Location() != time.UTC || got.Format(time.RFC3339Nano) != tc.want {
			t.Errorf("UnmarshalTime(%q) = %v (%v), want %s in UTC", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []any{
		"", "garbage", "2026-12-01 10:00:00", "10000-01-01T00:00:00Z", "0999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00Z",
		"1000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", 1700000000, nil,
	} {
		if got, err := UnmarshalTime(bad); !errors.Is(err, ErrInvalidTime) {
			t.Errorf("UnmarshalTime(%#v) = %v, %v, want ErrInvalidTime", bad, got, err)
		}
	}
}
