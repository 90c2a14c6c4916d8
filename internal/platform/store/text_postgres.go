package store

import "strings"

// PostgresText is a Text for PostgreSQL, sent by the simple protocol
// (Conn.SendPostgres), where values can only be inline.
func PostgresText() *Text { return &Text{lit: postgresLiterals{}} }

// postgresLiterals: a string that is not plain goes between quotes with
// each quote doubled, the only escape of a standard-conforming string (Open
// sets standard_conforming_strings, so a backslash is itself). NUL, which
// would end the query's text on the wire, goes as chr(0), which the server
// refuses as it refuses a bound one: the batch fails as the plain path
// would. A time is typed (TIMESTAMPTZ '…'): in an INSERT …
// SELECT … UNION ALL an untyped literal is text, which no timestamp column
// takes.
type postgresLiterals struct{}

func (postgresLiterals) str(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		case 0:
			b.WriteString("' || chr(0) || '")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

func (postgresLiterals) time(b *strings.Builder, quoted string) {
	b.WriteString("TIMESTAMPTZ ")
	b.WriteString(quoted)
}
