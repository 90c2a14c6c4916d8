package checkout

import (
	"strconv"
	"strings"
	"time"
)

// sqlText is a MySQL statement with its values written inline, as the
// driver's client-side interpolation (store.Open sets it) would send them.
// The batch's statement carries some thirty values per order; bound as
// arguments, each went through database/sql's conversion and the driver then
// copied the whole text again while escaping it: about a fifth of the
// batch's Go CPU in process.
//
// A string goes between quotes only when every byte is printable ASCII other
// than the quote and the backslash. Anything else (a CJK goods name, a
// buyer's remark or key) goes as a hex literal with a utf8mb4 introducer,
// which no sql_mode (NO_BACKSLASH_ESCAPES) reads differently: there is no
// escaping to get wrong.
type sqlText struct {
	b       strings.Builder
	scratch [40]byte
	times   []stamp // a batch's few distinct times, each formatted once
}

type stamp struct {
	t    time.Time
	text string
}

// sql appends SQL text (never a value).
func (q *sqlText) sql(s string) { q.b.WriteString(s) }

// int appends an integer value.
func (q *sqlText) int(n int64) { q.b.Write(strconv.AppendInt(q.scratch[:0], n, 10)) }

// time appends a DATETIME value in UTC, the session zone of every
// connection (store.Open sets the driver's Loc to UTC).
func (q *sqlText) time(t time.Time) {
	for _, st := range q.times {
		if st.t.Equal(t) {
			q.b.WriteString(st.text)
			return
		}
	}
	text := string(t.UTC().AppendFormat(append(q.scratch[:0], '\''), "2006-01-02 15:04:05.999999'"))
	if len(q.times) < 8 {
		q.times = append(q.times, stamp{t, text})
	}
	q.b.WriteString(text)
}

// str appends a string value.
func (q *sqlText) str(s string) {
	if plain(s) {
		q.b.WriteByte('\'')
		q.b.WriteString(s)
		q.b.WriteByte('\'')
		return
	}
	const hex = "0123456789abcdef"
	q.b.WriteString("_utf8mb4 X'")
	for i := 0; i < len(s); i++ {
		q.b.WriteByte(hex[s[i]>>4])
		q.b.WriteByte(hex[s[i]&0x0f])
	}
	q.b.WriteByte('\'')
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

func (q *sqlText) String() string { return q.b.String() }
