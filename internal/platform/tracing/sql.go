package tracing

import (
	"context"
	"database/sql/driver"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Connector is c with a client span for each statement sent through it
// (ent's, a domain's raw SQL, the group-commit batch's multi-statement
// query, transactions' commits), named by the statement's first word and
// carrying db.system and the statement's text without its values (Scrub).
// A statement outside any span starts no trace. Off, it is c.
func (t *Tracing) Connector(system string, c driver.Connector) driver.Connector {
	if t == nil {
		return c
	}
	return &connector{Connector: c, t: t, system: attribute.String("db.system", system), backslash: system == "mysql"}
}

type connector struct {
	driver.Connector
	t      *Tracing
	system attribute.KeyValue
	// backslash: a backslash escapes the next byte in a literal (MySQL's
	// default); PostgreSQL's standard strings and SQLite's take it as is.
	backslash bool
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tracedConn{Conn: conn, c: c}, nil
}

// start begins a statement's span, only under a span of the caller's.
func (c *connector) start(ctx context.Context, query string) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, noSpan
	}
	ctx, span := c.t.tracer.Start(ctx, operation(query), trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(c.system, attribute.String("db.query.text", Scrub(query, c.backslash)))
	}
	return ctx, span
}

// tracedConn passes every optional interface of database/sql on to the driver's
// connection; where the driver lacks one it answers as database/sql
// expects of a driver without it (driver.ErrSkip: fall back).
type tracedConn struct {
	driver.Conn
	c *connector
}

func (k *tracedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := k.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	ctx, span := k.c.start(ctx, query)
	res, err := e.ExecContext(ctx, query, args)
	endStatement(span, err)
	return res, err
}

func (k *tracedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := k.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	ctx, span := k.c.start(ctx, query)
	rows, err := q.QueryContext(ctx, query, args)
	endStatement(span, err)
	return rows, err
}

func (k *tracedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var (
		st  driver.Stmt
		err error
	)
	if p, ok := k.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = k.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &tracedStmt{Stmt: st, c: k.c, query: query}, nil
}

func (k *tracedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var (
		tx  driver.Tx
		err error
	)
	if b, ok := k.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = k.Conn.Begin() //nolint:staticcheck // the driver has nothing else
	}
	if err != nil {
		return nil, err
	}
	return &tracedTx{Tx: tx, c: k.c, ctx: ctx}, nil
}

func (k *tracedConn) Ping(ctx context.Context) error {
	if p, ok := k.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (k *tracedConn) ResetSession(ctx context.Context) error {
	if r, ok := k.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (k *tracedConn) IsValid() bool {
	if v, ok := k.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (k *tracedConn) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := k.Conn.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// Raw is the driver's own connection, for code that reaches it through
// sql.Conn.Raw.
func (k *tracedConn) Raw() driver.Conn { return k.Conn }

// Statement starts the span of a statement sent on the driver's own
// connection (Raw), past the wrapper; the returned func ends it.
func (k *tracedConn) Statement(ctx context.Context, query string) (context.Context, func(error)) {
	ctx, span := k.c.start(ctx, query)
	return ctx, func(err error) { endStatement(span, err) }
}

// tracedTx gives COMMIT its span: where a batch spends its fsync.
type tracedTx struct {
	driver.Tx
	c   *connector
	ctx context.Context
}

func (t *tracedTx) Commit() error {
	_, span := t.c.start(t.ctx, "COMMIT")
	err := t.Tx.Commit()
	endStatement(span, err)
	return err
}

type tracedStmt struct {
	driver.Stmt
	c     *connector
	query string
}

func (s *tracedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	ctx, span := s.c.start(ctx, s.query)
	var (
		res driver.Result
		err error
	)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		res, err = e.ExecContext(ctx, args)
	} else {
		var vs []driver.Value
		if vs, err = values(args); err == nil {
			res, err = s.Stmt.Exec(vs) //nolint:staticcheck // the driver has nothing else
		}
	}
	endStatement(span, err)
	return res, err
}

func (s *tracedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	ctx, span := s.c.start(ctx, s.query)
	var (
		rows driver.Rows
		err  error
	)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		rows, err = q.QueryContext(ctx, args)
	} else {
		var vs []driver.Value
		if vs, err = values(args); err == nil {
			rows, err = s.Stmt.Query(vs) //nolint:staticcheck // the driver has nothing else
		}
	}
	endStatement(span, err)
	return rows, err
}

func (s *tracedStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func values(args []driver.NamedValue) ([]driver.Value, error) {
	vs := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, driver.ErrSkip
		}
		vs[i] = a.Value
	}
	return vs, nil
}

// endStatement ends a statement's span; driver.ErrSkip is database/sql
// asking for another way, not a failure.
func endStatement(span trace.Span, err error) {
	if err == driver.ErrSkip {
		err = nil
	}
	End(span, err)
}

// operation names a statement's span by its first keyword (SELECT,
// INSERT, BEGIN…), as the semantic conventions suggest when the table is
// not known.
func operation(query string) string {
	q := strings.TrimLeft(query, " \t\r\n(")
	end := strings.IndexAny(q, " \t\r\n(;")
	if end < 0 {
		end = len(q)
	}
	if end == 0 || end > 16 {
		return "SQL"
	}
	return strings.ToUpper(q[:end])
}

// maxQueryText bounds db.query.text: a group-commit batch's statement of
// a hundred orders, its values scrubbed, is still tens of kilobytes.
const maxQueryText = 4096

// Scrub is query without its values: every string literal (quoted '…',
// with ” inside; MySQL's X'…' and PostgreSQL's E'…' too) and every number
// outside an identifier is written ?, so a span carries the statement's
// shape and none of a buyer's data (the group-commit batch writes its
// values inline). Identifiers in double quotes or backquotes stay. Cut at
// maxQueryText bytes. backslash: a backslash escapes the byte after it
// inside a literal (MySQL).
func Scrub(query string, backslash bool) string {
	var b strings.Builder
	b.Grow(min(len(query), maxQueryText))
	for i := 0; i < len(query) && b.Len() < maxQueryText; {
		c := query[i]
		switch {
		case c == '\'':
			i = skipQuoted(query, i+1, '\'', backslash)
			b.WriteByte('?')
		case (c == 'x' || c == 'X' || c == 'e' || c == 'E' || c == 'b' || c == 'B') && i+1 < len(query) && query[i+1] == '\'' && !wordByte(prev(query, i)):
			i = skipQuoted(query, i+2, '\'', backslash)
			b.WriteByte('?')
		case c == '"' || c == '`':
			j := skipQuoted(query, i+1, c, false)
			b.WriteString(query[i:j])
			i = j
		case c >= '0' && c <= '9' && !wordByte(prev(query, i)):
			j := i
			for j < len(query) && (wordByte(query[j]) || query[j] == '.') {
				j++
			}
			b.WriteByte('?')
			i = j
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			// A comment runs to the end of its line; it may quote anything.
			for i < len(query) && query[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	s := b.String()
	if len(s) > maxQueryText {
		s = s[:maxQueryText]
	}
	return s
}

// skipQuoted returns the index after the quote q that closes the literal
// starting at i (a doubled quote stays inside; with backslash, a
// backslash escapes the next byte).
func skipQuoted(s string, i int, q byte, backslash bool) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			if backslash {
				i += 2
				continue
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

func prev(s string, i int) byte {
	if i == 0 {
		return ' '
	}
	return s[i-1]
}

func wordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
