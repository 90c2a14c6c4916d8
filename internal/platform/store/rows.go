package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"
)

// Values receives one row of a table write, column by column, always in the
// same order. A table's write is defined once, as a function of its row that
// calls these (checkout's orders, lines, idempotency records and events,
// inventory's ledger rows), with the column names of ent's generated
// packages; each way of sending it renders that one definition: Insert with
// bound arguments, Text with the values inline.
type Values interface {
	Int(col string, v int64)
	Str(col string, v string)
	Time(col string, v time.Time)
	// Raw sets col to an SQL expression written by the caller (column names,
	// arithmetic on integers it formatted itself): never a value from input.
	Raw(col string, expr string)
	// Lookup sets col to expr, an SQL expression with one ? standing for
	// key: "(SELECT id FROM orders WHERE order_sn = ?)". A row can so point
	// at another row written in the same statement or batch, found by its
	// unique key rather than by an id counted on from LAST_INSERT_ID().
	Lookup(col string, expr string, key string)
}

// Insert renders a multi-row INSERT with bound arguments.
type Insert struct {
	table string
	cols  []string
	row   strings.Builder // the row being written
	rows  strings.Builder
	args  []any
	n     int
	first bool // the first row names the columns
}

// NewInsert starts an INSERT into table.
func NewInsert(table string) *Insert { return &Insert{table: table} }

// Row adds one row, written by def.
func (in *Insert) Row(def func(Values)) *Insert {
	in.first = in.n == 0
	in.row.Reset()
	def(insertValues{in})
	if in.n > 0 {
		in.rows.WriteString(", ")
	}
	in.rows.WriteByte('(')
	in.rows.WriteString(in.row.String())
	in.rows.WriteByte(')')
	in.n++
	return in
}

// Len is the number of rows added.
func (in *Insert) Len() int { return in.n }

// SQL returns the statement and its arguments.
func (in *Insert) SQL() (string, []any) {
	b := in.head()
	b.WriteString(") VALUES ")
	b.WriteString(in.rows.String())
	return b.String(), in.args
}

// head is "INSERT INTO table (columns" (the caller closes the list).
func (in *Insert) head() *strings.Builder {
	b := &strings.Builder{}
	b.WriteString("INSERT INTO ")
	b.WriteString(in.table)
	b.WriteString(" (")
	writeCols(b, in.cols)
	return b
}

// SelectSQL returns the one row added as INSERT … SELECT … FROM from (from
// carries its own ? arguments, appended after the row's): a row whose
// values are read from another row as the statement runs, such as a ledger
// row's balance from the SKU row it moved.
func (in *Insert) SelectSQL(from string, args ...any) (string, []any) {
	b := in.head()
	b.WriteString(") SELECT ")
	b.WriteString(in.row.String())
	b.WriteString(" FROM ")
	b.WriteString(from)
	return b.String(), append(in.args, args...)
}

// Execer is a transaction or a client (ent's, or a connection).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier reads: a transaction, a client, or the batch's connection.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Exec runs in on e.
func Exec(ctx context.Context, e Execer, in *Insert) error {
	q, args := in.SQL()
	_, err := e.ExecContext(ctx, q, args...)
	return err
}

type insertValues struct{ in *Insert }

func (v insertValues) col(name string) {
	in := v.in
	if in.row.Len() > 0 {
		in.row.WriteString(", ")
	}
	if in.first {
		in.cols = append(in.cols, name)
	}
}

func (v insertValues) arg(name string, a any) {
	v.col(name)
	v.in.row.WriteByte('?')
	v.in.args = append(v.in.args, a)
}

func (v insertValues) Int(col string, n int64)      { v.arg(col, n) }
func (v insertValues) Str(col string, s string)     { v.arg(col, s) }
func (v insertValues) Time(col string, t time.Time) { v.arg(col, t) }
func (v insertValues) Raw(col string, expr string)  { v.col(col); v.in.row.WriteString(expr) }
func (v insertValues) Lookup(col, expr, key string) {
	v.col(col)
	v.in.row.WriteString(expr)
	v.in.args = append(v.in.args, key)
}

// writeCols writes column names, quoting the one reserved word among them
// (idempotency_key.key); quoting every name would lengthen the group-commit
// batch's statement, whose parsing is a third of the server's work.
func writeCols(b *strings.Builder, cols []string) {
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		if c == "key" {
			b.WriteString("`key`")
		} else {
			b.WriteString(c)
		}
	}
}

// Text is a statement with its values written inline, as the MySQL
// driver's client-side interpolation (Open sets it) would send them: the
// group-commit batch's one round trip. Its statement carries some thirty
// values per order; bound as arguments, each went through database/sql's
// conversion and the driver then copied the whole text again while escaping
// it: about a fifth of the batch's Go CPU in process.
//
// How a value is spelled is its dialect's (text_mysql.go, text_postgres.go):
// MySQLText and PostgresText make one. The zero Text is MySQL's.
type Text struct {
	// Compound: the statement runs as an anonymous compound statement
	// (MariaDB's BEGIN NOT ATOMIC … END), where IF and SIGNAL exist.
	Compound bool

	lit     literals
	b       strings.Builder
	scratch [40]byte
	times   []stamp // a batch's few distinct times, each formatted once
	// Insert's state: the columns (named by the first row), and whether
	// the row being written has a value yet.
	cols    []string
	first   bool
	started bool
}

// literals spells a dialect's values in SQL text.
type literals interface {
	// str writes a string that plain (below) refused.
	str(b *strings.Builder, s string)
	// time writes a formatted UTC time ("'2006-01-02 15:04:05.999999'").
	time(b *strings.Builder, quoted string)
}

func (q *Text) literals() literals {
	if q.lit == nil {
		return mysqlLiterals{}
	}
	return q.lit
}

type stamp struct {
	t    time.Time
	text string
}

// Grow reserves room for n more bytes.
func (q *Text) Grow(n int) { q.b.Grow(n) }

// SQL appends SQL text (never a value).
func (q *Text) SQL(s string) { q.b.WriteString(s) }

// Int appends an integer value.
func (q *Text) Int(n int64) { q.b.Write(strconv.AppendInt(q.scratch[:0], n, 10)) }

// Time appends a time value in UTC, the session zone of every connection
// (Open sets it).
func (q *Text) Time(t time.Time) {
	for _, st := range q.times {
		if st.t.Equal(t) {
			q.literals().time(&q.b, st.text)
			return
		}
	}
	text := string(t.UTC().AppendFormat(append(q.scratch[:0], '\''), "2006-01-02 15:04:05.999999'"))
	if len(q.times) < 8 {
		q.times = append(q.times, stamp{t, text})
	}
	q.literals().time(&q.b, text)
}

// Str appends a string value: between quotes as it is when every byte is
// printable ASCII other than the quote and the backslash, otherwise as its
// dialect spells it.
func (q *Text) Str(s string) {
	if plain(s) {
		q.b.WriteByte('\'')
		q.b.WriteString(s)
		q.b.WriteByte('\'')
		return
	}
	q.literals().str(&q.b, s)
}

// plain reports whether s can go between single quotes as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '\'' || c == '\\' {
			return false
		}
	}
	return true
}

func (q *Text) String() string { return q.b.String() }

// Insert appends a multi-row INSERT into table of n rows, row j written by
// def(j, …), values inline.
func (q *Text) Insert(table string, n int, def func(j int, v Values)) {
	q.insertRows(table, n, def, ") VALUES (", ", (", ")")
}

// insertRows writes "INSERT INTO table (columns" then lead, row 0, tail,
// and next, row j, tail for every later row: the one rendering of Insert
// and InsertSelect. The column list is only known once the first row is
// written: that row is rendered aside, then the statement head, then the
// rest in place.
func (q *Text) insertRows(table string, n int, def func(j int, v Values), lead, next, tail string) {
	first := Text{lit: q.lit}
	first.times = q.times
	first.first, first.started = true, false
	def(0, textValues{&first})
	q.times = first.times
	q.SQL("INSERT INTO ")
	q.SQL(table)
	q.SQL(" (")
	writeCols(&q.b, first.cols)
	q.SQL(lead)
	q.SQL(first.b.String())
	q.SQL(tail)
	for j := 1; j < n; j++ {
		q.SQL(next)
		q.first, q.started = false, false
		def(j, textValues{q})
		q.SQL(tail)
	}
}

type textValues struct{ q *Text }

func (v textValues) col(name string) {
	q := v.q
	if q.started {
		q.b.WriteString(", ")
	}
	q.started = true
	if q.first {
		q.cols = append(q.cols, name)
	}
}

func (v textValues) Int(col string, n int64)      { v.col(col); v.q.Int(n) }
func (v textValues) Str(col string, s string)     { v.col(col); v.q.Str(s) }
func (v textValues) Time(col string, t time.Time) { v.col(col); v.q.Time(t) }
func (v textValues) Raw(col string, expr string)  { v.col(col); v.q.SQL(expr) }
func (v textValues) Lookup(col, expr, key string) {
	v.col(col)
	before, after, _ := strings.Cut(expr, "?")
	v.q.SQL(before)
	v.q.Str(key)
	v.q.SQL(after)
}

// Marks is n bound-argument marks for an IN list: "?, ?, ?".
func Marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// Statement is a statement being written, whose values go either inline
// (Text, the MySQL batch) or as bound arguments (Bound): SQL that must say
// the same on both paths is written once, against this.
type Statement interface {
	SQL(s string)
	Int(n int64)
	Str(s string)
	Time(t time.Time)
}

// Bound is a statement with its values as arguments.
type Bound struct {
	b    strings.Builder
	Args []any
}

func (q *Bound) SQL(s string)     { q.b.WriteString(s) }
func (q *Bound) Int(n int64)      { q.b.WriteByte('?'); q.Args = append(q.Args, n) }
func (q *Bound) Str(s string)     { q.b.WriteByte('?'); q.Args = append(q.Args, s) }
func (q *Bound) Time(t time.Time) { q.b.WriteByte('?'); q.Args = append(q.Args, t) }
func (q *Bound) String() string   { return q.b.String() }
