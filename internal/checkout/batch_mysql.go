package checkout

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"storefront/ent/orderline"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// mysqlWriter is the batch's writer on MySQL and MariaDB (serverBatcher
// does the rest): the engine (inventory.MySQLBatch) writes the stock and
// the transaction around it, in one round trip; the writer adds the
// orders' rows and reads their ids.
type mysqlWriter struct {
	// compound: the server runs anonymous compound statements (MariaDB).
	compound bool
	// beforeCommit, afterCommit: see commitHooks.
	commitHooks
}

func (b *mysqlWriter) engine() inventory.BatchEngine {
	return inventory.MySQLBatch{Compound: b.compound}
}

// write: MariaDB's orders say their ids as they are inserted (the rows
// come back before COMMIT, read only once the statement ran to its end);
// MySQL has no RETURNING, and a SELECT after COMMIT finds them by number.
func (b *mysqlWriter) write(ctx context.Context, s *Service, c *store.Conn, batch []*ticket, d decision, now time.Time, begin bool) error {
	w, placed := b.batch(batch, d, now, begin)
	ids := make(map[string]int64, len(placed))
	w.Rows = func(r *inventory.Rows) error {
		if r.Compound {
			return s.writeOrders(r.Text, batch, d.won, placed, now, " RETURNING id, order_sn", func(q *store.Text, batch []*ticket, won []int, placed []*Order) {
				linesByTerms(r, batch, won, placed)
			})
		}
		return s.writeOrders(r.Text, batch, d.won, placed, now, "", linesEach)
	}
	if b.compound {
		w.Expect = int64(len(placed)) // every order got its line
	} else {
		w.Returned = func(r *inventory.Rows) { ordersByNumber(r, placed) }
	}
	w.Scan = func(r *sql.Rows) error {
		var id int64
		var sn string
		err := r.Scan(&id, &sn)
		ids[sn] = id
		return err
	}
	written, err := b.engine().Write(ctx, c, w)
	if err != nil && written.PastCommit {
		// Past COMMIT, then an error: on Galera not proof of a commit
		// (readBack says why), so the orders are read back.
		return readBack(ctx, c, placed, err)
	}
	if err := writeErr(err, batch, d); err != nil {
		return err
	}
	for _, o := range placed {
		if o.ID = ids[o.OrderSn]; o.ID == 0 {
			return fmt.Errorf("writing the batch of SKUs %v: order %s has no id", skusOf(batch), o.OrderSn)
		}
	}
	return nil
}

// linesByTerms writes the batch's lines as one INSERT per distinct line
// (every column but the order's id the same: on a hot SKU, the whole batch),
// the orders' ids found by number, each by the unique index:
//
//	INSERT INTO order_line (order_id, item_id, …) WITH v (sn) AS (VALUES ('…'), …)
//	SELECT STRAIGHT_JOIN o.id, 3, 1, … FROM v JOIN orders o ON o.order_sn = v.sn
//
// Row by row, each line found its order with a subquery of its own
// ((SELECT id FROM orders WHERE order_sn = …), orderRef) and repeated its
// goods name, spec text, price and mode: ~170 bytes and a subquery per
// order, about a quarter of MariaDB's CPU per order on a hot SKU. The join
// is driven by the numbers (STRAIGHT_JOIN, eq_ref on orders.order_sn): an
// IN list let the optimizer scan the whole index on a small table, and that
// scan's shared locks waited on another batch's uncommitted orders while it
// held order_line's AUTO-INC lock, which that batch then waited for (a
// deadlock, reported as error 1467). The lines written are counted
// (Batch.Expect): the batch commits only if every order got its line. MariaDB only (its VALUES; the
// statement is the compound one). Groups of fewer than four lines on average
// go row by row instead (a 16-SKU batch: not measured to lose or win, kept
// as main wrote it).
func linesByTerms(q *inventory.Rows, batch []*ticket, won []int, placed []*Order) {
	type group struct {
		line *OrderLine
		sns  *store.Text
	}
	var groups []*group
	byTerms := map[string]*group{}
	for j, o := range placed {
		l := &batch[won[j]].line.OrderLine
		terms := store.MySQLText(false)
		terms.Insert(orderline.Table, 1, func(_ int, v store.Values) { l.writeTerms(v) })
		key := terms.String()
		g := byTerms[key]
		if g == nil {
			g = &group{line: l, sns: store.MySQLText(false)}
			g.sns.SQL("WITH v (sn) AS (VALUES (")
			byTerms[key] = g
			groups = append(groups, g)
		} else {
			g.sns.SQL("), (")
		}
		g.sns.Str(o.OrderSn)
	}
	if len(groups)*4 > len(placed) {
		// Mostly lines of their own (orders spread over many SKUs): a
		// statement per group would cost more than the subqueries it saves,
		// so the lines go row by row, as on MySQL.
		linesEach(q.Text, batch, won, placed)
		q.Count()
		return
	}
	for _, g := range groups {
		g.sns.SQL(")) SELECT STRAIGHT_JOIN")
		q.InsertQuery(orderline.Table, g.sns.String(), "FROM v JOIN orders o ON o.order_sn = v.sn", func(v store.Values) {
			v.Raw(orderline.FieldOrderID, "o.id")
			g.line.writeTerms(v)
		})
		q.SQL("; ")
		q.Count()
	}
}
