// Package scalar binds GraphQL scalars to Go types that gqlgen does not ship.
package scalar

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
)

// ErrInvalidID reports an ID that is not a positive integer in its one
// canonical form.
var ErrInvalidID = errors.New("invalid id")

// MarshalInt64ID writes a database id as a GraphQL ID (a string on the wire).
func MarshalInt64ID(id int64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [24]byte
		b := append(buf[:0], '"')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '"')
		_, _ = w.Write(b)
	})
}

// UnmarshalInt64ID accepts the string form (and, leniently, a JSON integer).
// Only the form MarshalInt64ID writes is an id: "03", "+3" and " 3" are
// refused as "abc" is, so that one row has one spelling, and so one
// response-cache key per selection (each spelling would be an
// entry of its own).
func UnmarshalInt64ID(v any) (int64, error) {
	switch v := v.(type) {
	case string:
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 || strconv.FormatInt(id, 10) != v {
			return 0, fmt.Errorf("%w: %q", ErrInvalidID, v)
		}
		return id, nil
	case json.Number:
		return UnmarshalInt64ID(string(v))
	case int64:
		if v <= 0 {
			return 0, fmt.Errorf("%w: %d", ErrInvalidID, v)
		}
		return v, nil
	case int:
		return UnmarshalInt64ID(int64(v))
	default:
		return 0, fmt.Errorf("%w: %T", ErrInvalidID, v)
	}
}
