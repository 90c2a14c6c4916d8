// Package money holds exact amounts in integer minor units (fen/cents).
// A float never touches a price: the seed's decimal(10,2) columns become BIGINT
// minor units, and the wire format is a decimal string with two places.
package money

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Money is an amount in minor units (1 = 0.01).
type Money int64

// ErrInvalid is returned for any text that is not a plain decimal with at most two places.
var ErrInvalid = errors.New("invalid money amount")

// Parse reads "89", "89.5" or "89.00" (optionally negative). More than two
// decimal places is an error rather than a silent rounding, and so is white
// space anywhere (" 1.00", "1.00\n"): the scalar is the decimal string and
// nothing else, as ids are.
func Parse(s string) (Money, error) {
	if s == "" {
		return 0, ErrInvalid
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || len(frac) > 2 || !allDigits(frac))) {
		return 0, fmt.Errorf("%w: %q", ErrInvalid, s)
	}
	if len(whole) > 15 {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalid, s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	m := Money(w*100 + f)
	if neg {
		m = -m
	}
	return m, nil
}

// MustParse is for constants in code and tests.
func MustParse(s string) Money {
	m, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return m
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String renders two decimal places: 8900 -> "89.00".
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalGQL writes the GraphQL Money scalar as a JSON string.
func (m Money) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, strconv.Quote(m.String()))
}

// UnmarshalGQL accepts only a string: a JSON number would already have passed
// through a float in most clients.
func (m *Money) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%w: Money must be a decimal string such as \"89.00\"", ErrInvalid)
	}
	p, err := Parse(s)
	if err != nil {
		return err
	}
	*m = p
	return nil
}
