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

// InsertQuery appends INSERT INTO table (…) before row after: one row,
// written by def, as the select list of a query (before ends in its SELECT,
// after begins with its FROM), values inline. The row's values may name the
// query's columns.
func (q *Text) InsertQuery(table, before, after string, def func(v Values)) {
	q.insertRows(table, 1, func(_ int, v Values) { def(v) }, ") "+before+" ", "", " "+after)
}
