package catalog

import (
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/specvalue"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// UpdateSkuInput edits one SKU's commercial terms; nil fields stay as they
// are. Stock is not here: it moves only through the ledger.
type UpdateSkuInput struct {
	ItemID, ExpectedVersion   int64
	SellPrice                 *money.Money
	LineationPrice, CostPrice *money.Money
	SkuCode                   *string // "" clears the code
	Status                    *enums.SkuStatus
	WeightGrams               *int64
}

// UpdateSku applies an admin's SKU form if the SKU is still at
// ExpectedVersion (errs.VersionConflict otherwise, nothing written). Price,
// code and status are catalog data, so the goods version is bumped too.
func (s *Service) UpdateSku(ctx context.Context, in UpdateSkuInput) (*SKU, error) {
	if in.Status != nil && !slices.Contains(in.Status.Values(), string(*in.Status)) {
		return nil, fmt.Errorf("%w: status %q", errs.InvalidInput, *in.Status)
	}
	if err := checkCode(in.SkuCode); err != nil {
		return nil, err
	}
	if in.SellPrice != nil {
		if err := checkSellPrice(fmt.Sprintf("SKU %d", in.ItemID), *in.SellPrice); err != nil {
			return nil, err
		}
	}
	var row *ent.Sku
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		cur, err := tx.Sku.Get(ctx, in.ItemID)
		if ent.IsNotFound(err) {
			return fmt.Errorf("%w: SKU %d", errs.NotFound, in.ItemID)
		}
		if err != nil {
			return err
		}
		t := SkuTerms{SellPrice: valueOr(in.SellPrice, cur.SellPrice), LineationPrice: valueOr(in.LineationPrice, cur.LineationPrice),
			CostPrice: valueOr(in.CostPrice, cur.CostPrice), WeightGrams: valueOr(in.WeightGrams, cur.WeightGrams)}
		if err := s.checkTerms(t); err != nil {
			return err
		}
		if in.Status != nil && *in.Status == enums.SkuEnabled && cur.Status != enums.SkuEnabled {
			if err := checkSelectable(ctx, tx, cur); err != nil {
				return err
			}
		}
		// Goods row first, then the SKU row: the lock order of every catalog edit.
		if err := bumpGoods(ctx, tx, cur.GoodsID, nil, nil); err != nil {
			return err
		}
		u := tx.Sku.Update().Where(sku.ID(in.ItemID), sku.Version(in.ExpectedVersion)).AddVersion(1).
			SetSellPrice(t.SellPrice).SetLineationPrice(t.LineationPrice).SetCostPrice(t.CostPrice).
			SetWeightGrams(t.WeightGrams).SetNillableStatus(in.Status)
		if in.SkuCode != nil {
			if code := normaliseCode(in.SkuCode); code != nil {
				u.SetSkuCode(*code)
			} else {
				u.ClearSkuCode()
			}
		}
		n, err := u.Save(ctx)
		if err != nil {
			return skuWriteError(err)
		}
		if n == 0 {
			return fmt.Errorf("%w: SKU %d is at version %d, not %d", errs.VersionConflict, in.ItemID, cur.Version, in.ExpectedVersion)
		}
		if row, err = tx.Sku.Get(ctx, in.ItemID); err != nil {
			return err
		}
		return listing.Refresh(ctx, tx, row.GoodsID)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	s.changed(row.GoodsID)
	return SKUOf(row)
}

// checkSelectable refuses to enable a SKU that names a removed value or
// misses a dimension: it would show a price on the page that nobody can pick.
func checkSelectable(ctx context.Context, tx *ent.Tx, row *ent.Sku) error {
	ids, err := parseIDList(row.SpecValueIds)
	if err != nil {
		return fmt.Errorf("SKU %d: spec_value_ids %q: %w", row.ID, row.SpecValueIds, err)
	}
	values, err := tx.SpecValue.Query().Where(specvalue.GoodsID(row.GoodsID), specvalue.Disabled(false)).All(ctx)
	if err != nil {
		return err
	}
	active, dims := map[int64]bool{}, map[int64]bool{}
	for _, v := range values {
		active[v.ID] = true
		dims[v.SpecID] = true
	}
	for _, id := range ids {
		if !active[id] {
			return fmt.Errorf("%w: SKU %d uses a removed spec value; edit the specs instead", errs.InvalidInput, row.ID)
		}
	}
	if len(ids) != len(dims) {
		return fmt.Errorf("%w: SKU %d is not a combination of the current specs", errs.InvalidInput, row.ID)
	}
	return nil
}

// SetStatus puts a goods on or off shelf (or into the recycle bin).
func (s *Service) SetStatus(ctx context.Context, goodsID int64, status enums.GoodsStatus) (*Goods, error) {
	if !slices.Contains(status.Values(), string(status)) {
		return nil, fmt.Errorf("%w: status %q", errs.InvalidInput, status)
	}
	return s.setGoods(ctx, goodsID, func(u *ent.GoodsUpdate) { u.SetStatus(status) })
}

// setGoods applies one edit of the goods row as a catalog edit: the version
// moves, views reload, and the admin's view is returned.
func (s *Service) setGoods(ctx context.Context, goodsID int64, set func(*ent.GoodsUpdate)) (*Goods, error) {
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		if err := bumpGoods(ctx, tx, goodsID, nil, set); err != nil {
			return err
		}
		return listing.Refresh(ctx, tx, goodsID)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	s.changed(goodsID)
	return s.Goods(ctx, Viewer{Admin: true}, goodsID)
}

func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
