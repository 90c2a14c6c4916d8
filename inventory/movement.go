package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/enums"
	"storefront/listing"
	"storefront/money"
	"storefront/store"
)

// Movement is one change of one SKU's stock, booked as one ledger row whose
// business key (change type, biz type, biz number, SKU) is unique. Num is
// signed: a sale takes (-n), a restore gives back (+n).
type Movement struct {
	ItemID, GoodsID int64
	Num             int64
	Type            ChangeType
	BizType, BizSn  string
	Remark          string
	At              time.Time
	// PoolID is the stock pool whose balance the row moves; 0 is the SKU's
	// main stock.
	PoolID int64
}

// Terms are what a seller read of a SKU before taking its stock: a take
// holds only while the SKU is still sold on them (same price, spec text and
// goods, enabled, the goods on shelf under that name), so an edit committed
// after the read is never sold at the old terms.
type Terms struct {
	Price     money.Money
	SpecText  string
	GoodsName string
}

// Sale is a movement that takes stock on the terms its seller read.
// Locked sales (lock-at-order goods) do not move stock yet: they raise the
// SKU's lock_stock, and payment deducts them (Deduct) or a close releases
// them (Release). Lock is part of the terms: a take holds only while the
// goods is still in the mode it was read in, so a switch of mode applies to
// every order placed after it, whatever a cache remembered.
type Sale struct {
	Movement
	Terms
	Lock bool
	// Buyer is who orders: a sale from a pool (Movement.PoolID) counts
	// against the buyer's per-buyer limit.
	Buyer string
	// PoolLimit is the pool's per-buyer limit as read (it never changes).
	PoolLimit int64
}

// Short reports the sale whose take did not hold: less stock than asked,
// or the SKU or its goods no longer on the terms read. Whoever sold decides
// which from a fresh read; nothing of the transaction may commit.
type Short struct{ Sale Sale }

func (e *Short) Error() string {
	return fmt.Sprintf("SKU %d: fewer than %d left, or no longer sold as read", e.Sale.ItemID, -e.Sale.Num)
}

// write is the one definition of a ledger row. before and after are the
// balances around the movement: numbers, or SQL expressions of a balance the
// statement reads itself ("stock + 3" from the SKU row just moved, "@s - 3"
// from the batch's locked read).
func (m *Movement) write(v store.Values, before, after string) {
	v.Int(stocklog.FieldItemID, m.ItemID)
	v.Int(stocklog.FieldGoodsID, m.GoodsID)
	v.Int(stocklog.FieldChangeType, int64(m.Type))
	v.Int(stocklog.FieldChangeNum, m.Num)
	v.Raw(stocklog.FieldBeforeStock, before)
	v.Raw(stocklog.FieldAfterStock, after)
	v.Str(stocklog.FieldBizType, m.BizType)
	v.Str(stocklog.FieldBizSn, m.BizSn)
	v.Str(stocklog.FieldRemark, m.Remark)
	v.Time(stocklog.FieldCreatedAt, m.at())
	v.Int(stocklog.FieldPoolID, m.PoolID)
}

func (m *Movement) at() time.Time {
	if m.At.IsZero() {
		return time.Now()
	}
	return m.At
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// taking is the start of the SET clause of a sale's CAS, to be followed by
// its quantity: a locked sale raises lock_stock, any other lowers stock.
func taking(lock bool) string {
	if lock {
		return "UPDATE sku SET lock_stock = lock_stock + "
	}
	return "UPDATE sku SET stock = stock - "
}

// Take applies sales inside the caller's transaction, one CAS per SKU in
// ascending id order (the lock order of every stock-moving transaction, so
// none can deadlock on another's rows), each with its ledger row written
// from the row just moved: two statements, one round trip each, between the
// lock and COMMIT. The goods are read first, before any row lock. The first
// sale that does not hold is returned as *Short.
func Take(ctx context.Context, tx *ent.Tx, sales []Sale) error {
	sales = slices.SortedFunc(slices.Values(sales), func(a, b Sale) int { return cmp.Compare(a.ItemID, b.ItemID) })
	if err := checkGoods(ctx, tx, sales); err != nil {
		return err
	}
	// Pool sales after every SKU row: the lock order is SKU rows, then pool
	// rows (ascending pool id). A pool sale never touches its SKU's row.
	var pools []*Sale
	var emptied []int64
	for i := range sales {
		s := &sales[i]
		if s.PoolID != 0 {
			pools = append(pools, s)
			continue
		}
		n := -s.Num
		// Available is stock - lock_stock, whatever the goods' mode now: a
		// SKU switched to deduct-at-order may still hold units locked by
		// orders placed before. The first CAS leaves stock (listing.go).
		var moved int64
		for _, floor := range leaving(n) {
			res, err := tx.ExecContext(ctx, taking(s.Lock)+"?, version = version + 1 "+
				"WHERE id = ? AND stock - lock_stock >= ? AND sell_price = ? AND spec_value_str = ? AND goods_id = ? AND status = ?",
				n, s.ItemID, floor, int64(s.Price), s.SpecText, s.GoodsID, string(enums.SkuEnabled))
			if err != nil {
				return fmt.Errorf("taking stock of SKU %d: %w", s.ItemID, err)
			}
			if moved, err = res.RowsAffected(); err != nil {
				return err
			} else if moved == 1 {
				emptied = emptiedBy(emptied, floor, n, s.GoodsID)
				break
			}
		}
		if moved == 0 {
			return &Short{*s}
		}
		if s.Lock {
			continue // stock did not move: no ledger row until payment
		}
		if err := bookMoved(ctx, tx, &s.Movement); err != nil {
			return err
		}
	}
	// Pools in ascending id, as the group-commit batch takes them.
	slices.SortFunc(pools, func(a, b *Sale) int { return cmp.Compare(a.PoolID, b.PoolID) })
	for _, s := range pools {
		if err := takePool(ctx, tx, s); err != nil {
			return err
		}
	}
	return listing.Emptied(ctx, tx, emptied...)
}

// bookMoved writes m's ledger row from the SKU row this transaction has
// just moved by m and holds locked: before = stock - m.Num, after = stock
// (m.Num is signed: a take of 3 books before = stock + 3).
func bookMoved(ctx context.Context, tx *ent.Tx, m *Movement) error {
	q, args := store.NewInsert(stocklog.Table).
		Row(func(v store.Values) { m.write(v, "stock + "+itoa(-m.Num), "stock") }).
		SelectSQL("sku WHERE id = ?", m.ItemID)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("booking change type %d of SKU %d: %w", m.Type, m.ItemID, err)
	}
	return nil
}

// checkGoods confirms that the sales' goods are on shelf under the names
// and in the stock mode read (a plain read: the goods row is not locked).
func checkGoods(ctx context.Context, tx *ent.Tx, sales []Sale) error {
	args := []any{string(enums.GoodsOnShelf)}
	marks := ""
	for i, s := range sales {
		if i > 0 {
			marks += ", "
		}
		marks += "?"
		args = append(args, s.GoodsID)
	}
	rs, err := tx.QueryContext(ctx, "SELECT id, name, stock_mode FROM goods WHERE status = ? AND delete_time IS NULL AND id IN ("+marks+")", args...)
	if err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	defer rs.Close()
	type read struct {
		name string
		mode enums.StockMode
	}
	onSale := make(map[int64]read, len(sales))
	for rs.Next() {
		var id int64
		var r read
		if err := rs.Scan(&id, &r.name, &r.mode); err != nil {
			return fmt.Errorf("checking goods: %w", err)
		}
		onSale[id] = r
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	for _, s := range sales {
		// A pool sale too: the pool follows its goods' mode.
		if r, ok := onSale[s.GoodsID]; !ok || r.name != s.GoodsName || r.mode != modeOf(s.Lock) {
			return &Short{s}
		}
	}
	return nil
}

// modeOf is the stock mode a sale with lock was decided under.
func modeOf(lock bool) enums.StockMode {
	if lock {
		return enums.LockAtOrder
	}
	return enums.DeductAtOrder
}

// TakeLocked takes the movements (all of one SKU, in booking order) from a
// row whose balance the caller read under the lock it holds: one CAS for
// their total and one ledger row each, with its before/after as if applied
// one after another. The group-commit batch on SQLite, whose transaction
// holds the database's write lock from BEGIN.
//
// stock and locked are the balances as read; with lock the movements raise
// lock_stock instead and book no ledger row (stock did not move).
func TakeLocked(ctx context.Context, tx *ent.Tx, stock, locked int64, moves []Movement, lock bool) error {
	if len(moves) == 0 {
		return nil
	}
	id := moves[0].ItemID
	var total int64
	for _, m := range moves {
		total -= m.Num
	}
	res, err := tx.ExecContext(ctx, taking(lock)+"?, version = version + 1 WHERE id = ? AND stock - lock_stock >= ?", total, id, total)
	if err != nil {
		return fmt.Errorf("taking stock of SKU %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		// Read under the lock: only something bypassing the lock gets here,
		// and a guess must not be booked.
		return fmt.Errorf("taking stock of SKU %d: %d available under the lock, yet the CAS for %d failed", id, stock-locked, total)
	}
	if stock-locked-total <= 0 {
		if err := listing.Emptied(ctx, tx, moves[0].GoodsID); err != nil {
			return err
		}
	}
	if lock {
		return nil
	}
	return bookChain(ctx, tx, stock, moves)
}

// bookChain books moves (of one balance, in booking order) in one insert,
// each row's before/after as if applied one after another from stock, the
// balance read under the lock the caller holds.
func bookChain(ctx context.Context, tx *ent.Tx, stock int64, moves []Movement) error {
	ins := store.NewInsert(stocklog.Table)
	before := stock
	for i := range moves {
		m := &moves[i]
		ins.Row(func(v store.Values) { m.write(v, itoa(before), itoa(before+m.Num)) })
		before += m.Num
	}
	q, args := ins.SQL()
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("booking the takes of SKU %d (pool %d): %w", moves[0].ItemID, moves[0].PoolID, err)
	}
	return nil
}

// WriteTakes renders, into the group-commit batch's statement on MySQL, the
// movements of one SKU (in booking order) sold on terms: the locked read of
// its balance into @s, one ledger row each chained from it, and one CAS for
// their total that holds only on the terms read; @c counts the CASes that
// held, for the batch's guard before COMMIT.
//
// With lock (lock-at-order goods) the CAS raises lock_stock instead and no
// ledger row is booked: stock did not move. Either way the CAS holds only
// while stock - lock_stock covers the total.
func WriteTakes(q *store.Text, terms Terms, moves []Movement, lock bool) {
	id, goods := moves[0].ItemID, moves[0].GoodsID
	q.SQL("SELECT stock, lock_stock INTO @s, @l FROM sku WHERE id = ")
	q.Int(id)
	q.SQL(" FOR UPDATE; ")
	var total int64
	if lock {
		for _, m := range moves {
			total -= m.Num
		}
	} else {
		q.Insert(stocklog.Table, len(moves), func(j int, v store.Values) {
			m := &moves[j]
			m.write(v, "@s - "+itoa(total), "@s - "+itoa(total-m.Num))
			total -= m.Num
		})
		q.SQL("; ")
	}
	writeGoodsCheck(q, goods, terms, lock)
	q.SQL(taking(lock))
	q.Int(total)
	q.SQL(", version = version + 1 WHERE id = ")
	q.Int(id)
	q.SQL(" AND stock - lock_stock >= ")
	q.Int(total)
	q.SQL(" AND goods_id = ")
	q.Int(goods)
	q.SQL(" AND sell_price = ")
	q.Int(int64(terms.Price))
	q.SQL(" AND spec_value_str = ")
	q.Str(terms.SpecText)
	q.SQL(" AND status = ")
	q.Str(string(enums.SkuEnabled))
	q.SQL(" AND @g; SET @c := @c + ROW_COUNT(); ")
	listing.WriteEmptied(q, goods, "@s - @l - "+itoa(total))
}

// writeGoodsCheck sets @g, in the batch's statement, to whether the goods
// is still on shelf under the name and in the stock mode its sales were
// decided on (a plain read: the goods row is not locked).
func writeGoodsCheck(q *store.Text, goods int64, terms Terms, lock bool) {
	q.SQL("SET @g := (SELECT 1 FROM goods WHERE id = ")
	q.Int(goods)
	q.SQL(" AND status = ")
	q.Str(string(enums.GoodsOnShelf))
	q.SQL(" AND delete_time IS NULL AND name = ")
	q.Str(terms.GoodsName)
	q.SQL(" AND stock_mode = ")
	q.Str(string(modeOf(lock)))
	q.SQL("); ")
}

// Sold adds what a paid order sold to each SKU's volume, in ascending SKU
// order like every multi-SKU write (the payment's transaction).
func Sold(ctx context.Context, tx *ent.Tx, lines []RestoreLine) error {
	lines = slices.SortedFunc(slices.Values(lines), func(a, b RestoreLine) int { return cmp.Compare(a.ItemID, b.ItemID) })
	for _, l := range lines {
		if _, err := tx.ExecContext(ctx, "UPDATE sku SET volume = volume + ? WHERE id = ?", l.Num, l.ItemID); err != nil {
			return fmt.Errorf("adding volume of SKU %d: %w", l.ItemID, err)
		}
	}
	return listing.Sold(ctx, tx, unitsByGoods(lines))
}
