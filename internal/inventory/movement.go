package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/stocklog"
	"storefront/internal/guard"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
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
	// GoodsLimit is the goods' purchase limit as read (nil: none): part of
	// the terms, so a limit set after the read sends the order round again.
	GoodsLimit *int64
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

// skuCAS is the one definition of the conditional UPDATE by which a sale
// takes a SKU's stock, on every path: the plain path's Take, the SQLite
// batch's TakeLocked and the MySQL batch's WriteTakes render it. It takes n
// units while stock - lock_stock is at least floor (available, not on
// hand, whatever the goods' mode now: a SKU switched to deduct-at-order may
// still hold units locked by orders placed before), and moves the stock's
// version, never the terms' (a sale must not refuse an admin's edit of the
// terms). A locked sale (lock-at-order goods) raises lock_stock
// instead of lowering stock.
//
// With terms it holds only while the SKU is still sold on them: same goods,
// price and spec text, enabled. The terms are the SKU row's own columns, so
// the check and the take are one statement on one row lock. Without terms
// the caller read the row under the lock it holds (the SQLite batch).
type skuCAS struct {
	id, n, floor int64
	lock         bool
	goods        int64
	terms        *Terms
}

func (c skuCAS) write(w store.Statement) {
	if c.lock {
		w.SQL("UPDATE sku SET lock_stock = lock_stock + ")
	} else {
		w.SQL("UPDATE sku SET stock = stock - ")
	}
	w.Int(c.n)
	w.SQL(", stock_version = stock_version + 1 WHERE id = ")
	w.Int(c.id)
	w.SQL(" AND stock - lock_stock >= ")
	w.Int(c.floor)
	if c.terms == nil {
		return
	}
	w.SQL(" AND sell_price = ")
	w.Int(int64(c.terms.Price))
	w.SQL(" AND ")
	skuSold(w, c.goods, c.terms.SpecText)
}

// exec runs c bound, inside tx, and reports whether it held.
func (c skuCAS) exec(ctx context.Context, tx *ent.Tx) (bool, error) {
	var q store.Bound
	c.write(&q)
	res, err := tx.ExecContext(ctx, q.String(), q.Args...)
	if err != nil {
		return false, fmt.Errorf("taking stock of SKU %d: %w", c.id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CheckGoods takes the shared lock on the goods of sales and checks them
// (see checkGoods): a seller's first lock, before its inserts, so that it
// never waits for an admin's edit while it holds other rows. TakeChecked
// then takes the stock.
func CheckGoods(ctx context.Context, tx *ent.Tx, sales []Sale) error {
	return checkGoods(ctx, tx, sales)
}

// TakeChecked applies sales inside the caller's transaction, after
// CheckGoods in the same transaction: one CAS per SKU in ascending id order
// (the lock order of every stock-moving transaction, so none can deadlock on
// another's rows), each with its ledger row written from the row just moved:
// two statements, one round trip each, between the lock and COMMIT. The
// first sale that does not hold is returned as *Short. The counters (a
// purchase limit's) come last, after the listing, as a close gives them
// back: a *guard.CounterLimit refuses the order.
func TakeChecked(ctx context.Context, tx *ent.Tx, sales []Sale, counters ...guard.Counter) error {
	sales = slices.SortedFunc(slices.Values(sales), func(a, b Sale) int { return cmp.Compare(a.ItemID, b.ItemID) })
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
		// The first CAS leaves stock (listing.go).
		held := false
		for _, floor := range leaving(n) {
			var err error
			if held, err = (skuCAS{id: s.ItemID, n: n, floor: floor, lock: s.Lock, goods: s.GoodsID, terms: &s.Terms}).exec(ctx, tx); err != nil {
				return err
			} else if held {
				emptied = emptiedBy(emptied, floor, n, s.GoodsID)
				break
			}
		}
		if !held {
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
	if err := listing.Emptied(ctx, tx, emptied...); err != nil {
		return err
	}
	return guard.AddCounters(ctx, tx, counters)
}

// bookMoved writes m's ledger row from the SKU row this transaction has
// just moved by m and holds locked: before = stock - m.Num, after = stock
// (m.Num is signed: a take of 3 books before = stock + 3).
func bookMoved(ctx context.Context, tx *ent.Tx, m *Movement) error {
	return bookFromRow(ctx, tx, m, "sku", m.ItemID)
}

// bookFromRow writes m's ledger row from the row id of table (a SKU's or a
// pool's, each with its stock column) that the transaction has just moved.
func bookFromRow(ctx context.Context, tx *ent.Tx, m *Movement, table string, id int64) error {
	q, args := store.NewInsert(stocklog.Table).
		Row(func(v store.Values) { m.write(v, "stock + "+itoa(-m.Num), "stock") }).
		SelectSQL(table+" WHERE id = ?", id)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("booking change type %d from %s %d: %w", m.Type, table, id, err)
	}
	return nil
}

// checkGoods confirms that the sales' goods are on shelf under the names
// and in the stock mode read. It is the movement's goods lock too (shared,
// lockGoods): the rows are read by id only, so exactly they are locked, and
// the check is made here on what the lock read.
func checkGoods(ctx context.Context, tx *ent.Tx, sales []Sale) error {
	ids := make([]int64, len(sales))
	for i, s := range sales {
		ids[i] = s.GoodsID
	}
	ids = distinct(ids)
	if err := store.Lock(ctx, tx, store.GoodsLock, store.Shared, ids...); err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	var rows []struct {
		ID     int64  `sql:"id"`
		Name   string `sql:"name"`
		Mode   string `sql:"stock_mode"`
		Status string `sql:"status"`
		Limit  *int64 `sql:"purchase_limit"`
	}
	err := tx.Goods.Query().Where(goods.IDIn(ids...)).Modify(func(s *entsql.Selector) {
		s.Select(s.C(goods.FieldID), s.C(goods.FieldName), s.C(goods.FieldStockMode), s.C(goods.FieldStatus), s.C(goods.FieldPurchaseLimit))
		store.ShareLock(s)
	}).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	read := make(map[int64]goodsRow, len(rows))
	for _, r := range rows {
		read[r.ID] = goodsRow{r.Status, r.Name, r.Mode, r.Limit}
	}
	for _, s := range sales {
		// A pool sale too: the pool follows its goods' mode.
		if r, ok := read[s.GoodsID]; !ok || !(GoodsOnSale{ID: s.GoodsID, Name: s.GoodsName, Lock: s.Lock, Limit: s.GoodsLimit}).heldBy(r) {
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

// Sold adds what a paid order sold to each SKU's volume, in ascending SKU
// order like every multi-SKU write (the payment's transaction), and then to
// the listing: AddVolume, then ListSold.
func Sold(ctx context.Context, tx *ent.Tx, lines []RestoreLine) error {
	if err := AddVolume(ctx, tx, lines); err != nil {
		return err
	}
	return ListSold(ctx, tx, lines)
}

// AddVolume is Sold's SKU rows without the listing, for a payment that
// takes pool rows after them and must write the listing last (ListSold).
func AddVolume(ctx context.Context, tx *ent.Tx, lines []RestoreLine) error {
	lines = slices.SortedFunc(slices.Values(lines), func(a, b RestoreLine) int { return cmp.Compare(a.ItemID, b.ItemID) })
	if err := lockGoods(ctx, tx, goodsOfLines(lines)...); err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := tx.ExecContext(ctx, "UPDATE sku SET volume = volume + ? WHERE id = ?", l.Num, l.ItemID); err != nil {
			return fmt.Errorf("adding volume of SKU %d: %w", l.ItemID, err)
		}
	}
	return nil
}

// ListSold adds lines' units to their goods' listing sales (after every
// SKU and pool row of the transaction).
func ListSold(ctx context.Context, tx *ent.Tx, lines []RestoreLine) error {
	return listing.Sold(ctx, tx, unitsByGoods(lines))
}
