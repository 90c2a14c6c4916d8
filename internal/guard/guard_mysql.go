package guard

import "storefront/internal/platform/store"

// MySQL renders guards in the group-commit batch's one statement on MySQL
// and MariaDB (inventory.MySQLBatch): each as its statement, and the
// condition that it held, which the batch counts right after it in a
// variable of its own statement (no variable's name is guard's to know).
type MySQL struct{}

// Held writes a guard's condition of having held; it must be written
// right after the guard's statement (it may read ROW_COUNT()).
type Held func(q *store.Text)

// Claim takes a claim's rows in one UPDATE, which held only if it took
// every one.
func (MySQL) Claim(q *store.Text, c *RowClaim) Held {
	c.update(q)
	q.SQL("; ")
	return func(q *store.Text) {
		q.SQL("ROW_COUNT() = ")
		q.Int(int64(len(c.IDs)))
	}
}

// Counter adds a counter's units in one upsert, which held if no holder
// it named is past the limit.
func (MySQL) Counter(q *store.Text, c *Counter) Held {
	k := c.Kind
	q.Insert(k.Table, len(c.Holders), c.row)
	q.SQL(" ON DUPLICATE KEY UPDATE " + k.Units + " = " + k.Units + " + VALUES(" + k.Units + "); ")
	return func(q *store.Text) {
		q.SQL("SELECT COUNT(*) = 0 FROM " + k.Table + " WHERE " + k.Scope + " = ")
		q.Int(c.Scope)
		q.SQL(" AND " + k.Units + " > ")
		q.Int(c.Limit)
		q.SQL(" AND " + k.Holder + " IN (")
		for j, h := range c.Holders {
			if j > 0 {
				q.SQL(", ")
			}
			q.Str(h)
		}
		q.SQL(")")
	}
}
