package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/enums"
	"storefront/inventory"
	"storefront/money"
	"storefront/store"
)

// fallbackPrefix marks keys derived from the input when the client sent none.
const fallbackPrefix = "auto:"

// Place validates in, then places the order in one short transaction. With a
// key already finished for the same input it returns that order again.
func (s *Service) Place(ctx context.Context, in PlaceInput) (*Order, error) {
	if err := s.check(in); err != nil {
		return nil, err
	}
	t := &ticket{in: in, hash: requestHash(in), key: in.IdempotencyKey, keep: s.cfg.Retention}
	if t.key == "" {
		t.key, t.keep = fallbackPrefix+t.hash, s.cfg.FallbackWindow
	}
	if id, ok := s.groupable(in); ok {
		t.item = id
		return s.placeGrouped(ctx, t)
	}
	return s.placePlain(ctx, t)
}

// placePlain is the plain path: claim the key in its own statement, resolve
// the SKUs, place the order in its own transaction.
func (s *Service) placePlain(ctx context.Context, t *ticket) (*Order, error) {
	c, replay, err := s.claimKey(ctx, t.in.UserID, t.key, t.hash, t.keep)
	if err != nil {
		return nil, err
	}
	if replay != "" {
		return s.replay(ctx, replay)
	}
	o, err := s.place(ctx, t.in, c)
	// IN_PROGRESS here means our lease was taken over: the key is no longer
	// ours to release.
	if err != nil && !errors.Is(err, ErrIdempotencyInProgress) {
		s.release(ctx, c)
	}
	return o, err
}

// staleReruns bounds how often place re-reads after its CAS found a SKU or
// goods no longer as resolved; past it the order answers UNAVAILABLE.
const staleReruns = 3

func (s *Service) place(ctx context.Context, in PlaceInput, c *claim) (*Order, error) {
	var stale *staleLine
	for range staleReruns + 1 {
		lines, amount, err := s.resolve(ctx, in.Items)
		if err != nil {
			return nil, err
		}
		if stale != nil {
			// The CAS failed on this SKU; a fresh read that still shows it
			// as sold and short of stock is a plain OUT_OF_STOCK.
			if l := lineOf(lines, stale.ItemID); l != nil && l.sameSale(stale.line) && l.stock < l.Quantity {
				return nil, outOfStock(l)
			}
		}
		if err := s.at("resolved"); err != nil {
			return nil, err
		}
		o := s.newOrder(in, lines, amount)
		err = s.placeTx(ctx, o, lines, c)
		if !errors.As(err, &stale) {
			if err != nil {
				return nil, err
			}
			return o, nil
		}
	}
	return nil, fmt.Errorf("%w: SKU %d kept changing while the order was placed; retry", store.ErrUnavailable, stale.ItemID)
}

func (s *Service) newOrder(in PlaceInput, lines []*line, amount money.Money) *Order {
	now := s.now()
	o := &Order{
		OrderSn: newOrderSn(now), UserID: in.UserID, Status: enums.OrderUnpaid,
		Amount: amount, Currency: s.cfg.Currency, Remark: in.Remark,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.OrderTTL),
	}
	for _, l := range lines {
		o.Lines = append(o.Lines, &l.OrderLine)
	}
	return o
}

// placeTx places one order in its own transaction: the plain path, and a
// batch of one on the group path.
func (s *Service) placeTx(ctx context.Context, o *Order, lines []*line, c *claim) error {
	now := o.CreatedAt
	err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		// Everything that needs no SKU row lock goes first: the lock is taken by
		// the CAS below and held to COMMIT, and on a hot SKU throughput is
		// bounded by how long that is.
		row, err := tx.Order.Create().SetOrderSn(o.OrderSn).SetUserID(o.UserID).SetAmount(o.Amount).
			SetCurrency(o.Currency).SetRemark(o.Remark).SetCreatedAt(now).SetExpiresAt(o.ExpiresAt).Save(ctx)
		if err != nil {
			return fmt.Errorf("inserting order: %w", err)
		}
		o.ID = row.ID
		builders := make([]*ent.OrderLineCreate, len(lines))
		for i, l := range lines {
			builders[i] = tx.OrderLine.Create().SetOrderID(row.ID).SetItemID(l.ItemID).SetGoodsID(l.GoodsID).
				SetGoodsName(l.GoodsName).SetSpecValueStr(l.SpecValueStr).SetUnitPrice(l.UnitPrice).SetQuantity(l.Quantity)
		}
		if err := tx.OrderLine.CreateBulk(builders...).Exec(ctx); err != nil {
			return fmt.Errorf("inserting order lines: %w", err)
		}
		if err := emit(ctx, tx, EventOrderPlaced, o, "", now); err != nil {
			return err
		}
		if err := finish(ctx, tx, c, o.OrderSn); err != nil {
			return err
		}
		if err := checkGoods(ctx, tx, lines); err != nil {
			return err
		}
		for _, l := range lines {
			if err := deduct(ctx, tx, l, o.OrderSn, now); err != nil {
				return err
			}
		}
		return nil
	})
	var stale *staleLine
	if errors.As(err, &stale) {
		return err
	}
	return store.Classify(err)
}

// checkGoods confirms, inside the transaction and before any row lock, that
// the lines' goods are still on sale under the names resolve read: a change
// committed since sends the order round again (staleLine).
func checkGoods(ctx context.Context, tx *ent.Tx, lines []*line) error {
	ids := make([]any, 0, len(lines))
	for _, l := range lines {
		ids = append(ids, l.GoodsID)
	}
	rs, err := tx.QueryContext(ctx, "SELECT id, name FROM goods WHERE status = ? AND delete_time IS NULL AND id IN ("+placeholders(len(ids))+")",
		append([]any{string(enums.GoodsOnShelf)}, ids...)...)
	if err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	defer rs.Close()
	onSale := make(map[int64]string, len(lines))
	for rs.Next() {
		var id int64
		var name string
		if err := rs.Scan(&id, &name); err != nil {
			return fmt.Errorf("checking goods: %w", err)
		}
		onSale[id] = name
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("checking goods: %w", err)
	}
	for _, l := range lines {
		if name, ok := onSale[l.GoodsID]; !ok || name != l.GoodsName {
			return &staleLine{l}
		}
	}
	return nil
}

// deduct takes l.Quantity from the SKU by CAS and writes the ledger row from
// the row just updated (before = stock + n, after = stock): two statements,
// one round trip each, between the lock and COMMIT. The CAS holds only while
// the SKU is still sold as resolved (price, spec text, goods, enabled), so an
// edit committed after the read is never sold at the old terms; a failed CAS
// is answered by place from a fresh read (staleLine).
func deduct(ctx context.Context, tx *ent.Tx, l *line, orderSn string, now time.Time) error {
	res, err := tx.ExecContext(ctx,
		"UPDATE sku SET stock = stock - ?, version = version + 1 WHERE id = ? AND stock >= ? "+
			"AND sell_price = ? AND spec_value_str = ? AND goods_id = ? AND status = ?",
		l.Quantity, l.ItemID, l.Quantity, l.UnitPrice, l.SpecValueStr, l.GoodsID, string(enums.SkuEnabled))
	if err != nil {
		return fmt.Errorf("deducting SKU %d: %w", l.ItemID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return &staleLine{l}
	}
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
			"SELECT id, goods_id, ?, ?, stock + ?, stock, ?, ?, '', ? FROM sku WHERE id = ?",
		int8(inventory.OrderDeduct), -l.Quantity, l.Quantity, inventory.BizOrder, orderSn, now, l.ItemID); err != nil {
		return fmt.Errorf("booking deduction of SKU %d: %w", l.ItemID, err)
	}
	return nil
}

// staleLine: the transaction found a line's SKU or goods not as resolved, or
// short of stock; it rolled back and place decides from a fresh read.
type staleLine struct{ *line }

func (e *staleLine) Error() string {
	return fmt.Sprintf("SKU %d is no longer as read (price, status, name or stock)", e.ItemID)
}

func lineOf(lines []*line, id int64) *line {
	for _, l := range lines {
		if l.ItemID == id {
			return l
		}
	}
	return nil
}

func outOfStock(l *line) error {
	return fmt.Errorf("%w: SKU %d (%s %s) has fewer than %d left", ErrOutOfStock, l.ItemID, l.GoodsName, l.SpecValueStr, l.Quantity)
}

// replay answers a request whose key already finished with that order.
func (s *Service) replay(ctx context.Context, orderSn string) (*Order, error) {
	if s.cfg.OnReplay != nil {
		s.cfg.OnReplay()
	}
	return s.load(ctx, orderSn)
}
