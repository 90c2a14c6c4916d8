package store

// InsertSelect appends a multi-row INSERT into table of n rows whose
// values may read the columns of from (a table, or a WITH query of the
// same statement), row j written by def(j, …), values inline:
// INSERT INTO table (…) SELECT row 0 FROM from UNION ALL SELECT row 1 FROM
// from …. A row so reads what the statement just wrote (PostgreSQL's
// ledger rows from the SKU row its CAS returned), and none is written when
// from has no row.
func (q *Text) InsertSelect(table string, n int, from string, def func(j int, v Values)) {
	first := Text{lit: q.lit}
	first.times = q.times
	first.first, first.started = true, false
	def(0, textValues{&first})
	q.times = first.times
	q.SQL("INSERT INTO ")
	q.SQL(table)
	q.SQL(" (")
	writeCols(&q.b, first.cols)
	q.SQL(") SELECT ")
	q.SQL(first.b.String())
	q.SQL(" FROM ")
	q.SQL(from)
	for j := 1; j < n; j++ {
		q.SQL(" UNION ALL SELECT ")
		q.first, q.started = false, false
		def(j, textValues{q})
		q.SQL(" FROM ")
		q.SQL(from)
	}
}
