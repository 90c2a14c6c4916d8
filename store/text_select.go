package store

// InsertSelect appends a multi-row INSERT into table of n rows whose
// values may read the columns of from (a table, or a WITH query of the
// same statement), row j written by def(j, …), values inline:
// INSERT INTO table (…) SELECT row 0 FROM from UNION ALL SELECT row 1 FROM
// from …. A row so reads what the statement just wrote (PostgreSQL's
// ledger rows from the SKU row its CAS returned), and none is written when
// from has no row.
func (q *Text) InsertSelect(table string, n int, from string, def func(j int, v Values)) {
	q.insertRows(table, n, def, ") SELECT ", " UNION ALL SELECT ", " FROM "+from)
}
