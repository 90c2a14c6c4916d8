// Package input is the one rule every string a client sends must pass
// before anything below the door sees it: valid UTF-8, no NUL or other
// control character (line breaks and tabs only where a field allows them),
// and no longer than its limit. It exists because the backends disagree on
// such strings: PostgreSQL refuses a NUL ("null character not permitted",
// SQLSTATE 54000) and MariaDB bytes that are not UTF-8 (Error 1300) in the
// middle of a statement that carries other customers' rows, where SQLite
// stores both; and a string over its column's length fails on MariaDB's
// strict mode and PostgreSQL but is stored by SQLite. Refused at the door,
// a string means the same thing on every backend.
//
// The GraphQL side applies it to every String, ID and custom scalar
// argument and input field by walking the operation against the schema
// (internal/server/textrule.go); a field's limit and whether it may hold line breaks
// are declared on the field with the schema directive @text. Headers and
// payment notifications call Check and Key directly.
package input

import (
	"fmt"
	"unicode/utf8"

	"storefront/internal/vocab/errs"
)

// Rule is what one field accepts.
type Rule struct {
	// Max is the longest value, in characters (runes): MariaDB's and
	// PostgreSQL's varchar(n) count characters, not bytes, so a limit no
	// larger than the column's fits every backend. With Bytes it counts
	// bytes instead.
	Max   int
	Bytes bool
	// Lines lets the value hold line feeds, carriage returns and tabs
	// (descriptions, remarks); every other control character is refused
	// everywhere.
	Lines bool
}

// DefaultMax is the limit of a field that declares none: the longest
// varchar the schema's string columns use (255), so a field stored without
// a declaration of its own fits wherever it lands.
const DefaultMax = 255

// Default is the rule of a field without a declaration.
var Default = Rule{Max: DefaultMax}

// MaxKeyBytes is the longest idempotency key: the key column's varchar(255),
// counted in bytes as API-CONVENTIONS says.
const MaxKeyBytes = 255

// KeyRule is the rule of the Idempotency-Key header and the idempotencyKey
// arguments: printable text on one line, at most MaxKeyBytes bytes.
var KeyRule = Rule{Max: MaxKeyBytes, Bytes: true}

// Error is a refused string: the field it came in (a path such as
// createGoods.input.skus[2].skuCode, or a header's name) and why. It wraps
// errs.InvalidInput.
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("invalid input: %s %s", e.Field, e.Reason) }
func (e *Error) Unwrap() error { return errs.InvalidInput }

// Check returns nil when s passes r, else why not (without the field,
// which the caller knows). It reads s once and allocates nothing when s
// passes: it runs on every string argument of every request, the product
// page's included.
func Check(s string, r Rule) string {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// ASCII: controls are 0x00–0x1F and DEL.
			if c < 0x20 || c == 0x7F {
				if !r.Lines || c != '\n' && c != '\r' && c != '\t' {
					return fmt.Sprintf("holds the control character U+%04X at byte %d", c, i)
				}
			}
			i++
			n++
			continue
		}
		ru, size := utf8.DecodeRuneInString(s[i:])
		if ru == utf8.RuneError && size == 1 {
			return fmt.Sprintf("is not valid UTF-8 (byte 0x%02X at %d)", s[i], i)
		}
		// C1 controls (U+0080–U+009F): as invisible and as foreign to
		// text as C0's; the line and paragraph separators stay legal.
		if ru <= 0x9F {
			return fmt.Sprintf("holds the control character U+%04X at byte %d", ru, i)
		}
		i += size
		n++
	}
	if r.Bytes {
		n = len(s)
	}
	if r.Max > 0 && n > r.Max {
		unit := "characters"
		if r.Bytes {
			unit = "bytes"
		}
		return fmt.Sprintf("is %d %s long, over the limit of %d", n, unit, r.Max)
	}
	return ""
}

// Field checks s as field's value: nil, or an *Error naming field.
func Field(field, s string, r Rule) error {
	if why := Check(s, r); why != "" {
		return &Error{Field: field, Reason: why}
	}
	return nil
}

// Key checks an idempotency key that came as field (the header's name, or
// the argument's path).
func Key(field, key string) error { return Field(field, key, KeyRule) }
