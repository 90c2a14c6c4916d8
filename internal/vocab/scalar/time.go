package scalar

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// ErrInvalidTime reports a Time that is not an RFC 3339 string, or one
// outside MinTime..MaxTime.
var ErrInvalidTime = errors.New("invalid time")

// The times every backend stores and reads back exactly: MySQL's and
// MariaDB's DATETIME(6) holds years 1000 to 9999 to the microsecond, and
// PostgreSQL's timestamptz keeps microseconds. A Time argument outside them
// is INVALID_INPUT on every backend, rather than a database error on one.
var (
	MinTime = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// MarshalTime writes t as RFC 3339 with the fraction it has. Unlike
// gqlgen's graphql.MarshalTime it never writes null for the zero time: a
// Time! field must not turn into an INTERNAL "must not be null" error
// whatever the row holds (a pool starting at year 1).
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.Format(time.RFC3339Nano)))
	})
}

// UnmarshalTime accepts an RFC 3339 string ("2026-12-01T10:00:00Z", a
// fraction and any offset allowed) of an instant from MinTime to MaxTime,
// and returns it in UTC to the microsecond (a finer fraction is dropped), as
// every backend stores it. Anything else is INVALID_INPUT, never the zero
// time (gqlgen's own reads "" as year 1). A narrower range a field accepts
// is its domain's to check (inventory's pool times).
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: want an RFC 3339 string such as \"2026-12-01T10:00:00Z\", got %T", ErrInvalidTime, v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is not RFC 3339 (such as \"2026-12-01T10:00:00Z\")", ErrInvalidTime, s)
	}
	t = t.UTC().Truncate(time.Microsecond)
	if t.Before(MinTime) || t.After(MaxTime) {
		return time.Time{}, fmt.Errorf("%w: %q is outside %s..%s (UTC), the times every database stores", ErrInvalidTime, s,
			MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339Nano))
	}
	return t, nil
}
