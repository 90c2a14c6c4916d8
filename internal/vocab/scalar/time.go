package scalar

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// ErrInvalidTime reports a Time that is not an RFC 3339 string.
var ErrInvalidTime = errors.New("invalid time")

// MarshalTime writes t as RFC 3339 with the fraction it has. Unlike
// gqlgen's graphql.MarshalTime it never writes null for the zero time: a
// Time! field must not turn into an INTERNAL "must not be null" error
// whatever the row holds (issue 25: a pool starting at year 1).
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.Format(time.RFC3339Nano)))
	})
}

// UnmarshalTime accepts an RFC 3339 string ("2026-12-01T10:00:00Z", a
// fraction and any offset allowed); anything else is INVALID_INPUT, never
// the zero time (gqlgen's own reads "" as year 1). The range a field
// accepts is its domain's to check (inventory's pool times).
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: want an RFC 3339 string such as \"2026-12-01T10:00:00Z\", got %T", ErrInvalidTime, v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is not RFC 3339 (such as \"2026-12-01T10:00:00Z\")", ErrInvalidTime, s)
	}
	return t, nil
}
