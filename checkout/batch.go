package checkout

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"

	"storefront/ent"
	"storefront/ent/idempotency"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/outbox"
	"storefront/inventory"
	"storefront/store"
)

// errLeaseLost: some order of the batch no longer owns its idempotency key.
// Which one is not worth finding inside the transaction; the batch is rolled
// back and every order is placed alone, where each gets its own answer.
var errLeaseLost = errors.New("checkout: an idempotency lease of the batch was taken over")

// runBatch places the orders of batch (all of one SKU, in arrival order) and
// returns each one's outcome: exactly what placing them one after another on
// the plain path would have answered.
func (s *Service) runBatch(ctx context.Context, batch []*ticket) []error {
	errs := make([]error, len(batch))
	if len(batch) == 1 && !s.batchAlone {
		t := batch[0]
		errs[0] = s.placeTx(ctx, t.order, []*line{t.line}, t.claim)
		return errs
	}
	// One buyer hanging up must not fail the others' orders: the batch runs
	// to its end (a waiter that leaves early still gets its outcome reported).
	ctx = context.WithoutCancel(ctx)
	err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		return s.batchTx(ctx, tx, batch, errs)
	})
	if errors.Is(err, errLeaseLost) {
		for i, t := range batch {
			errs[i] = s.placeTx(ctx, t.order, []*line{t.line}, t.claim)
		}
		return errs
	}
	if err != nil {
		err = store.Classify(err)
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// batchTx is one batch transaction. errs receives the refusals (OUT_OF_STOCK);
// a returned error rolls back everything, so a crash at any point leaves
// either every accepted order with its ledger row or nothing.
func (s *Service) batchTx(ctx context.Context, tx *ent.Tx, batch []*ticket, errs []error) error {
	clear(errs) // the transaction may be retried
	id := batch[0].line.ItemID
	// A plain read first, no lock: orders that cannot fit are refused without
	// writing anything (after a sell-out that is every order).
	stock, err := readStock(ctx, tx, id, false)
	if err != nil {
		return err
	}
	won, _ := allocate(batch, stock, errs, func(int) bool { return true })
	if len(won) == 0 {
		return nil
	}
	// Every write that needs no SKU row lock, before the lock.
	if err := insertOrders(ctx, tx, won); err != nil {
		return err
	}
	if err := s.at("unlocked"); err != nil {
		return err
	}
	// Lock the row once. On SQLite the IMMEDIATE transaction has held the
	// database's write lock since BEGIN, so the first read is already exact.
	if s.db.Dialect == dialect.MySQL {
		if stock, err = readStock(ctx, tx, id, true); err != nil {
			return err
		}
	}
	// Stock may have moved since the plain read (a multi-SKU order, another
	// instance): allocate again among the orders written, in arrival order.
	inBatch := make(map[*ticket]bool, len(won))
	for _, t := range won {
		inBatch[t] = true
	}
	keep, _ := allocate(batch, stock, errs, func(i int) bool { return inBatch[batch[i]] })
	if err := deductBatch(ctx, tx, keep, stock); err != nil {
		return err
	}
	if len(keep) < len(won) {
		if err := unplace(ctx, tx, won, keep); err != nil {
			return err
		}
	}
	return s.at("locked")
}

// allocate walks batch in arrival order and gives each order considered all
// of its quantity or nothing, as one CAS per order would; a refused order
// gets OUT_OF_STOCK in errs and does not stop later, smaller ones.
func allocate(batch []*ticket, stock int64, errs []error, consider func(i int) bool) ([]*ticket, int64) {
	var fit []*ticket
	for i, t := range batch {
		if !consider(i) {
			continue
		}
		if q := t.line.Quantity; q <= stock {
			stock -= q
			fit = append(fit, t)
			errs[i] = nil
		} else {
			errs[i] = outOfStock(t.line)
		}
	}
	return fit, stock
}

func readStock(ctx context.Context, tx *ent.Tx, id int64, lock bool) (int64, error) {
	q := "SELECT stock FROM sku WHERE id = ?"
	if lock {
		q += " FOR UPDATE"
	}
	rows, err := tx.QueryContext(ctx, q, id)
	if err != nil {
		return 0, fmt.Errorf("reading stock of SKU %d: %w", id, err)
	}
	defer rows.Close()
	var stock int64
	if !rows.Next() {
		return 0, fmt.Errorf("reading stock of SKU %d: %w", id, errors.Join(ErrNotFound, rows.Err()))
	}
	if err := rows.Scan(&stock); err != nil {
		return 0, err
	}
	return stock, rows.Close()
}

// insertOrders writes the orders, their lines, their OrderPlaced events and
// their DONE idempotency records: four statements for the whole batch.
func insertOrders(ctx context.Context, tx *ent.Tx, won []*ticket) error {
	oc := make([]*ent.OrderCreate, len(won))
	for i, t := range won {
		o := t.order
		oc[i] = tx.Order.Create().SetOrderSn(o.OrderSn).SetUserID(o.UserID).SetAmount(o.Amount).
			SetCurrency(o.Currency).SetRemark(o.Remark).SetCreatedAt(o.CreatedAt).SetExpiresAt(o.ExpiresAt)
	}
	rows, err := tx.Order.CreateBulk(oc...).Save(ctx)
	if err != nil {
		return fmt.Errorf("inserting orders: %w", err)
	}
	lc := make([]*ent.OrderLineCreate, len(won))
	ec := make([]*ent.OutboxCreate, len(won))
	for i, t := range won {
		o, l := t.order, t.line
		o.ID = rows[i].ID
		lc[i] = tx.OrderLine.Create().SetOrderID(o.ID).SetItemID(l.ItemID).SetGoodsID(l.GoodsID).
			SetGoodsName(l.GoodsName).SetSpecValueStr(l.SpecValueStr).SetUnitPrice(l.UnitPrice).SetQuantity(l.Quantity)
		if ec[i], err = event(tx, EventOrderPlaced, o, "", o.CreatedAt); err != nil {
			return err
		}
	}
	if err := tx.OrderLine.CreateBulk(lc...).Exec(ctx); err != nil {
		return fmt.Errorf("inserting order lines: %w", err)
	}
	if err := tx.Outbox.CreateBulk(ec...).Exec(ctx); err != nil {
		return fmt.Errorf("writing %s events: %w", EventOrderPlaced, err)
	}
	return finishAll(ctx, tx, won)
}

// finishAll is finish for a batch: each claim DONE with its order number, in
// one UPDATE, each row still guarded by its owner's lease.
func finishAll(ctx context.Context, tx *ent.Tx, won []*ticket) error {
	var q strings.Builder
	args := make([]any, 0, 4*len(won)+2)
	q.WriteString("UPDATE idempotency_key SET state = ?, order_sn = CASE id")
	args = append(args, stateDone)
	for _, t := range won {
		q.WriteString(" WHEN ? THEN ?")
		args = append(args, t.claim.id, t.order.OrderSn)
	}
	q.WriteString(" END WHERE state = ? AND (")
	args = append(args, statePending)
	for i, t := range won {
		if i > 0 {
			q.WriteString(" OR ")
		}
		q.WriteString("(id = ? AND lease_until = ?)")
		args = append(args, t.claim.id, t.claim.lease)
	}
	q.WriteString(")")
	res, err := tx.ExecContext(ctx, q.String(), args...)
	if err != nil {
		return fmt.Errorf("recording idempotency keys: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(len(won)) {
		return errLeaseLost
	}
	return nil
}

// deductBatch takes the whole batch's quantity in one CAS on the locked row
// (stock is the balance read under the lock) and books one ledger row per
// order, each with its before/after as if applied one after another.
func deductBatch(ctx context.Context, tx *ent.Tx, keep []*ticket, stock int64) error {
	if len(keep) == 0 {
		return nil
	}
	id := keep[0].line.ItemID
	var total int64
	for _, t := range keep {
		total += t.line.Quantity
	}
	res, err := tx.ExecContext(ctx,
		"UPDATE sku SET stock = stock - ?, version = version + 1 WHERE id = ? AND stock >= ?", total, id, total)
	if err != nil {
		return fmt.Errorf("deducting SKU %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		// The row is locked and was read under the lock: this cannot happen
		// unless something bypassed the lock; refuse to book a guess.
		return fmt.Errorf("deducting SKU %d: %d in stock under the lock, yet the CAS for %d failed", id, stock, total)
	}
	lc := make([]*ent.StockLogCreate, len(keep))
	before := stock
	for i, t := range keep {
		q := t.line.Quantity
		lc[i] = tx.StockLog.Create().SetItemID(id).SetGoodsID(t.line.GoodsID).SetChangeType(int8(inventory.OrderDeduct)).
			SetChangeNum(-q).SetBeforeStock(before).SetAfterStock(before - q).SetBizType(inventory.BizOrder).
			SetBizSn(t.order.OrderSn).SetCreatedAt(t.order.CreatedAt)
		before -= q
	}
	if err := tx.StockLog.CreateBulk(lc...).Exec(ctx); err != nil {
		return fmt.Errorf("booking deductions of SKU %d: %w", id, err)
	}
	return nil
}

// unplace removes the orders written before the lock that the locked balance
// could not serve (stock moved in between: rare), and hands their keys back
// to PENDING so that each request releases its own key as on the plain path.
func unplace(ctx context.Context, tx *ent.Tx, won, keep []*ticket) error {
	kept := make(map[*ticket]bool, len(keep))
	for _, t := range keep {
		kept[t] = true
	}
	var ids, claims []int64
	var aggs []string
	for _, t := range won {
		if !kept[t] {
			ids = append(ids, t.order.ID)
			aggs = append(aggs, strconv.FormatInt(t.order.ID, 10))
			claims = append(claims, t.claim.id)
		}
	}
	if _, err := tx.OrderLine.Delete().Where(orderline.OrderIDIn(ids...)).Exec(ctx); err != nil {
		return fmt.Errorf("removing refused order lines: %w", err)
	}
	if _, err := tx.Outbox.Delete().Where(outbox.Type(EventOrderPlaced), outbox.AggregateIDIn(aggs...)).Exec(ctx); err != nil {
		return fmt.Errorf("removing refused order events: %w", err)
	}
	if _, err := tx.Order.Delete().Where(order.IDIn(ids...)).Exec(ctx); err != nil {
		return fmt.Errorf("removing refused orders: %w", err)
	}
	if err := tx.Idempotency.Update().Where(idempotency.IDIn(claims...)).
		SetState(statePending).ClearOrderSn().Exec(ctx); err != nil {
		return fmt.Errorf("reopening refused orders' keys: %w", err)
	}
	return nil
}

// at runs the test hook of a batch stage.
func (s *Service) at(stage string) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(stage)
}
