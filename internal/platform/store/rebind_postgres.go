package store

import (
	"context"
	"database/sql/driver"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// rebinding is pgx's connector whose connections read the code base's one
// way of writing raw SQL (dialect.go): each `?` outside a literal becomes
// PostgreSQL's $n, each backtick a double quote. ent's own statements come
// with $n already, and a `?` of an ent expression among them (ExprP) takes
// the number after the last $n before it, which is its argument's place.
//
// A `?` bound to an integer, a boolean or a time is typed by its value
// ($3::int8), as MySQL reads an interpolated value: PostgreSQL infers an
// untyped mark from where it stands, and where nothing says (CASE … THEN ?,
// SELECT ? AS g in a UNION) it takes text, which then meets a bigint.
type rebinding struct{ c driver.Connector }

func (r rebinding) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{c.(*stdlib.Conn)}, nil
}

func (r rebinding) Driver() driver.Driver { return r.c.Driver() }

// pgConn is a pgx connection that rebinds what it is sent.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(q, nil)) }
func (c *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(q, nil))
}
func (c *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(q, args), args)
}
func (c *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(q, args), args)
}

// rebind rewrites q's `?` marks as $n (typed by args, see rebinding) and
// its backticks as double quotes, leaving string literals, quoted
// identifiers and comments as they are.
func rebind(q string, args []driver.NamedValue) string {
	if strings.IndexByte(q, '?') < 0 && strings.IndexByte(q, '`') < 0 {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0 // the last argument number written or read
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'', '"':
			j := closing(q, i, c)
			b.WriteString(q[i:j])
			i = j - 1
		case '-':
			if i+1 < len(q) && q[i+1] == '-' {
				j := strings.IndexByte(q[i:], '\n')
				if j < 0 {
					j = len(q) - i
				}
				b.WriteString(q[i : i+j])
				i += j - 1
				continue
			}
			b.WriteByte(c)
		case '$':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if v, err := strconv.Atoi(q[i+1 : j]); err == nil && v > n {
				n = v
			}
			b.WriteString(q[i:j])
			i = j - 1
		case '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			if n <= len(args) {
				b.WriteString(typeOf(args[n-1].Value))
			}
		case '`':
			b.WriteByte('"')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closing is the index just past the literal (or quoted identifier) that
// opens at q[i] with quote; a doubled quote inside it is part of it.
func closing(q string, i int, quote byte) int {
	for j := i + 1; j < len(q); j++ {
		if q[j] == quote {
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// typeOf is the cast that types a mark bound to v, or "" to let the server
// infer it (a string: the column it meets says varchar, text or jsonb).
func typeOf(v any) string {
	switch v.(type) {
	case time.Time:
		return "::timestamptz"
	case nil:
		return ""
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return "::int8"
	case reflect.Bool:
		return "::bool"
	}
	return ""
}
