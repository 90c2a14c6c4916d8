// Package paging is the one implementation of Relay-style connection paging
// over id-ordered rows: page size rules and opaque cursors.
package paging

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid reports a negative page size or a malformed cursor.
var ErrInvalid = errors.New("invalid paging argument")

// Default and Max size a page (API-CONVENTIONS.md: first is capped at 100).
const (
	Default = 20
	Max     = 100
)

// Size turns a connection's `first` into a row count: anything above Max
// is capped, a negative value is an error, and 0 is no rows (a client
// asking only for totalCount or pageInfo). An absent `first` is First's
// business: it becomes Default before it gets here.
func Size(first int) (int, error) {
	if first < 0 {
		return 0, fmt.Errorf("%w: first must not be negative", ErrInvalid)
	}
	return min(first, Max), nil
}

// Window is a newest-first connection's page as its rows are read: Size
// of first, and the id its rows lie below (Decode of after; 0 when after is
// empty: from the newest).
func Window(kind string, first int, after string) (n int, below int64, err error) {
	if n, err = Size(first); err != nil || after == "" {
		return n, 0, err
	}
	below, err = Decode(kind, after)
	return n, below, err
}

// First is a connection argument `first` as the resolvers receive it (nil:
// absent) in the form Size takes: Default when absent, else as sent.
// Values beyond int's range are clamped so that Size still sees their sign.
func First(first *int64) int {
	switch {
	case first == nil:
		return Default
	case *first < 0:
		return -1
	}
	return int(min(*first, Max+1))
}

// Cursor is the opaque cursor of row id in a connection of kind. The kind
// keeps a cursor of one connection from being accepted by another.
func Cursor(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10)))
}

// Decode reverses Cursor for a connection of kind; any cursor Cursor would
// not have made is ErrInvalid.
func Decode(kind, c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), kind+":"); ok {
			// Only Cursor's own encoding: ParseInt also takes `01` and `+1`,
			// and each spelling of one cursor would be a response-cache
			// entry of its own.
			if id, err := strconv.ParseInt(rest, 10, 64); err == nil && Cursor(kind, id) == c {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: malformed cursor %q", ErrInvalid, c)
}

// CursorAt is the cursor of the index'th entry of row id in a connection of
// kind whose rows may each list as several entries (a webhook's delivery row
// of a batch lists each of its events).
func CursorAt(kind string, id int64, index int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10) + "." + strconv.Itoa(index)))
}

// DecodeAt reverses CursorAt for a connection of kind; any cursor CursorAt
// would not have made is ErrInvalid.
func DecodeAt(kind, c string) (int64, int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), kind+":"); ok {
			if a, b, ok := strings.Cut(rest, "."); ok {
				id, err1 := strconv.ParseInt(a, 10, 64)
				index, err2 := strconv.Atoi(b)
				if err1 == nil && err2 == nil && index >= 0 && CursorAt(kind, id, index) == c {
					return id, index, nil
				}
			}
		}
	}
	return 0, 0, fmt.Errorf("%w: malformed cursor %q", ErrInvalid, c)
}

// Trim cuts rows read with a limit of n+1 back to n and reports whether
// there was a next page.
func Trim[T any](rows []T, n int) ([]T, bool) {
	if len(rows) > n {
		return rows[:n], true
	}
	return rows, false
}
