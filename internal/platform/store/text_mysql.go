package store

import "strings"

// MySQLText is a Text for MySQL and MariaDB; compound: the statement runs as
// one anonymous compound statement (MariaDB).
func MySQLText(compound bool) *Text { return &Text{Compound: compound, lit: mysqlLiterals{}} }

// mysqlLiterals: a string that is not plain (a CJK goods name, a buyer's
// remark or key) goes as a hex literal with a utf8mb4 introducer, which no
// sql_mode (NO_BACKSLASH_ESCAPES) reads differently: there is no escaping
// to get wrong. A time is a plain quoted DATETIME.
type mysqlLiterals struct{}

func (mysqlLiterals) str(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteString("_utf8mb4 X'")
	for i := 0; i < len(s); i++ {
		b.WriteByte(hex[s[i]>>4])
		b.WriteByte(hex[s[i]&0x0f])
	}
	b.WriteByte('\'')
}

func (mysqlLiterals) time(b *strings.Builder, quoted string) { b.WriteString(quoted) }
