package inventory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/limits"
)

// AdjustInput is an incremental admin change of one SKU's stock.
type AdjustInput struct {
	ItemID int64
	Delta  int64
	Reason string
	// BizSn makes the change idempotent: the same number on the same SKU
	// applies once. Empty means a generated, unique number.
	BizSn string
}

// SetStockInput is the admin form's absolute value, read at ExpectedVersion.
type SetStockInput struct {
	ItemID          int64
	Stock           int64
	ExpectedVersion int64
	Reason          string
}

// StocktakeInput is a physical count of one SKU.
type StocktakeInput struct {
	ItemID  int64
	Counted int64
	Reason  string
}

// errApplied ends a transaction whose business number was already booked.
var errApplied = errors.New("already applied")

// Adjust adds Delta to the SKU's stock and writes a ledger row (change type
// 5, biz type manual) in one transaction. A negative delta only applies while
// stock >= -delta (the CAS, seed 003 6.2), otherwise ErrOutOfStock. A BizSn
// already booked for this SKU changes nothing and returns the SKU as it is.
func (s *Service) Adjust(ctx context.Context, in AdjustInput) (*ent.Sku, error) {
	if in.Delta == 0 || in.Delta > limits.MaxStock || in.Delta < -limits.MaxStock {
		return nil, fmt.Errorf("%w: delta must be non-zero and within ±%d", ErrInvalidInput, limits.MaxStock)
	}
	if err := checkReason(in.Reason); err != nil {
		return nil, err
	}
	bizSn := strings.TrimSpace(in.BizSn)
	if len(bizSn) > 64 {
		return nil, fmt.Errorf("%w: bizSn is longer than 64 bytes", ErrInvalidInput)
	}
	if bizSn == "" {
		bizSn = newBizSn("adj")
	}
	var row *ent.Sku
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		// Cheap path for a repeated request; the unique key below still decides
		// when two copies race past this check.
		done, err := tx.StockLog.Query().Where(stocklog.BizType(BizManual), stocklog.BizSn(bizSn),
			stocklog.ItemID(in.ItemID), stocklog.ChangeType(int8(Adjust))).Exist(ctx)
		if err != nil {
			return err
		}
		if done {
			return errApplied
		}
		row, err = move(ctx, tx, in.ItemID, in.Delta, in.Delta < 0)
		if err != nil {
			return err
		}
		return book(ctx, tx, row, Adjust, in.Delta, BizManual, bizSn, in.Reason)
	})
	if errors.Is(err, errApplied) {
		return s.sku(ctx, in.ItemID)
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	return row, nil
}

// SetStock turns an absolute value into a delta against the row the admin
// saw: "absolute writes are the ledger's enemy" (seed 003, 6.4). If the
// stock moved since ExpectedVersion (the stock's version: an edit of the
// SKU's terms does not move it), or under this transaction (a sale),
// nothing is written and the answer is ErrVersionConflict. A value below
// what unpaid orders hold locked is ErrOutOfStock: those units are theirs,
// and their payments must still find them.
func (s *Service) SetStock(ctx context.Context, in SetStockInput) (*ent.Sku, error) {
	if in.Stock < 0 || in.Stock > limits.MaxStock {
		return nil, fmt.Errorf("%w: stock must be between 0 and %d", ErrInvalidInput, limits.MaxStock)
	}
	if err := checkReason(in.Reason); err != nil {
		return nil, err
	}
	var row *ent.Sku
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		seen, err := seeLocked(ctx, tx, in.ItemID)
		if err != nil {
			return err
		}
		if seen.StockVersion != in.ExpectedVersion {
			return fmt.Errorf("%w: the stock of SKU %d is at version %d, not %d", ErrVersionConflict, in.ItemID, seen.StockVersion, in.ExpectedVersion)
		}
		if err := aboveLocked(seen, in.Stock, "stock"); err != nil {
			return err
		}
		if in.Stock == seen.Stock {
			row = seen
			return nil
		}
		row, err = casMove(ctx, tx, seen, in.Stock-seen.Stock)
		if err != nil {
			return err
		}
		return book(ctx, tx, row, Adjust, in.Stock-seen.Stock, BizManual, newBizSn("set"), in.Reason)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return row, nil
}

// Stocktake records a counted stock: the difference from the balance is a
// change type 6 row with the reason. A count that matches is still booked
// (with change 0), because "counted and found right" is part of the audit.
// If a sale moves the row between reading and writing, the count is retried
// against the new balance a few times before giving up with a conflict. A
// count below what unpaid orders hold locked is ErrOutOfStock, naming the
// locked quantity: the locked units are sold, and only their orders'
// payments or closes may move them.
func (s *Service) Stocktake(ctx context.Context, in StocktakeInput) (*ent.Sku, error) {
	if in.Counted < 0 || in.Counted > limits.MaxStock {
		return nil, fmt.Errorf("%w: countedStock must be between 0 and %d", ErrInvalidInput, limits.MaxStock)
	}
	if err := checkReason(in.Reason); err != nil {
		return nil, err
	}
	var (
		row *ent.Sku
		err error
	)
	// A fresh transaction per attempt: under MySQL's repeatable read a
	// re-read inside the same transaction would see the same old snapshot.
	for range 3 {
		err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
			seen, err := seeLocked(ctx, tx, in.ItemID)
			if err != nil {
				return err
			}
			if err := aboveLocked(seen, in.Counted, "countedStock"); err != nil {
				return err
			}
			row, err = casMove(ctx, tx, seen, in.Counted-seen.Stock)
			if err != nil {
				return err
			}
			return book(ctx, tx, row, Stocktake, in.Counted-seen.Stock, BizCount, newBizSn("count"), in.Reason)
		})
		if !errors.Is(err, ErrVersionConflict) {
			break
		}
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	return row, nil
}

// move applies delta with one conditional UPDATE and returns the row after
// it. The row is re-read inside the transaction: our UPDATE holds its lock,
// so the balance read is exactly the one this change produced.
func move(ctx context.Context, tx *ent.Tx, id, delta int64, guard bool) (*ent.Sku, error) {
	if _, err := seeLocked(ctx, tx, id); err != nil {
		return nil, err
	}
	u := tx.Sku.Update().Where(sku.ID(id)).AddStock(delta).AddStockVersion(1)
	if guard {
		// Available, not on hand: units locked by unpaid lock-mode orders
		// are theirs until they pay or close.
		u = u.Where(func(s *entsql.Selector) {
			s.Where(entsql.ExprP(s.C(sku.FieldStock)+" - "+s.C(sku.FieldLockStock)+" >= ?", -delta))
		})
	}
	n, err := u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("moving stock of SKU %d: %w", id, err)
	}
	if n == 0 {
		cur, err := tx.Sku.Get(ctx, id)
		if err != nil {
			return nil, notFound(err, id)
		}
		return nil, fmt.Errorf("%w: SKU %d (%s) has %d available, cannot take %d", ErrOutOfStock, id, cur.SpecValueStr, cur.Stock-cur.LockStock, -delta)
	}
	return moved(ctx, tx, id, delta)
}

// casMove applies delta only if the stock is still exactly as seen: same
// stock version, balance and lock (the guard repeats aboveLocked's check in
// the statement that writes).
func casMove(ctx context.Context, tx *ent.Tx, seen *ent.Sku, delta int64) (*ent.Sku, error) {
	n, err := tx.Sku.Update().
		Where(sku.ID(seen.ID), sku.StockVersion(seen.StockVersion), sku.Stock(seen.Stock), sku.LockStock(seen.LockStock),
			sku.LockStockLTE(seen.Stock+delta)).
		AddStock(delta).AddStockVersion(1).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("moving stock of SKU %d: %w", seen.ID, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: SKU %d changed meanwhile", ErrVersionConflict, seen.ID)
	}
	return moved(ctx, tx, seen.ID, delta)
}

// seeLocked reads the SKU (a plain read) and takes the shared lock on its
// goods before this transaction locks the SKU row: the lock order of
// goods_lock.go. goods_id never changes, so the plain read finds the right
// goods; the balance read may be older than the lock, which the writes'
// CAS decides.
func seeLocked(ctx context.Context, tx *ent.Tx, id int64) (*ent.Sku, error) {
	seen, err := tx.Sku.Get(ctx, id)
	if err != nil {
		return nil, notFound(err, id)
	}
	return seen, lockGoods(ctx, tx, seen.GoodsID)
}

// aboveLocked refuses an absolute balance (a set or a count) below what
// unpaid lock-mode orders hold on the SKU.
func aboveLocked(seen *ent.Sku, stock int64, field string) error {
	if stock < seen.LockStock {
		return fmt.Errorf("%w: SKU %d (%s) has %d units locked by unpaid orders; %s %d is below them (count again once those orders pay or close)",
			ErrOutOfStock, seen.ID, seen.SpecValueStr, seen.LockStock, field, stock)
	}
	return nil
}

// book writes the ledger row of a change that produced row.
func book(ctx context.Context, tx *ent.Tx, row *ent.Sku, t ChangeType, delta int64, bizType, bizSn, reason string) error {
	err := Book(ctx, tx, Entry{
		ItemID: row.ID, GoodsID: row.GoodsID, Type: t, Num: delta, Before: row.Stock - delta, After: row.Stock,
		BizType: bizType, BizSn: bizSn, Remark: strings.TrimSpace(reason),
	})
	if store.IsDuplicate(err) {
		return errApplied // a concurrent copy of the same bizSn committed first
	}
	return err
}

func (s *Service) sku(ctx context.Context, id int64) (*ent.Sku, error) {
	row, err := s.db.Client.Sku.Get(ctx, id)
	if err != nil {
		return nil, store.Classify(notFound(err, id))
	}
	return row, nil
}

func notFound(err error, id int64) error {
	if ent.IsNotFound(err) {
		return fmt.Errorf("%w: SKU %d", ErrNotFound, id)
	}
	return fmt.Errorf("loading SKU %d: %w", id, err)
}

func checkReason(r string) error {
	switch {
	case strings.TrimSpace(r) == "":
		return fmt.Errorf("%w: reason is empty", ErrInvalidInput)
	case len(strings.TrimSpace(r)) > 255:
		return fmt.Errorf("%w: reason is longer than 255 bytes", ErrInvalidInput)
	}
	return nil
}

// newBizSn numbers a change nobody named: random, so it never collides with
// another change and never makes one idempotent by accident.
func newBizSn(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
