package guard

import "storefront/internal/platform/store"

// Postgres renders guards in the group-commit batch's one query on
// PostgreSQL (inventory.PostgresBatch): each guard is a statement of its
// own that fails, when the guard did not hold, by dividing by a count of
// zero (SQLSTATE 22012), as every guard of the batch does; the server then
// skips every statement after it, COMMIT included.
type Postgres struct{}

// Claim takes a claim's rows in one UPDATE that returns them, and fails
// its statement unless it took every one.
func (Postgres) Claim(q *store.Text, c *RowClaim) {
	q.SQL("WITH u AS (")
	c.update(q)
	q.SQL(" RETURNING 1) SELECT 1 / (COUNT(*) = ")
	q.Int(int64(len(c.IDs)))
	q.SQL(")::int FROM u; ")
}

// Counter adds a counter's units in one upsert that returns them, and
// fails its statement when a holder passed the limit.
func (Postgres) Counter(q *store.Text, c *Counter) {
	k := c.Kind
	q.SQL("WITH b AS (")
	q.Insert(k.Table, len(c.Holders), c.row)
	// The table's name qualifies the column: unqualified it is ambiguous
	// beside EXCLUDED's.
	q.SQL(" ON CONFLICT (" + k.Scope + ", " + k.Holder + ") DO UPDATE SET " + k.Units + " = " + k.Table + "." + k.Units +
		" + EXCLUDED." + k.Units + " RETURNING " + k.Units + ")")
	q.SQL(" SELECT 1 / (COUNT(*) = 0)::int FROM b WHERE " + k.Units + " > ")
	q.Int(c.Limit)
	q.SQL("; ")
}
