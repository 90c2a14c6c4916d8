package catalog

import (
	"context"
	"fmt"
	"strings"

	"storefront/ent"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// UpdateGoodsInput edits a goods' name, content and category if it is still
// at ExpectedVersion; nil fields stay as they are.
type UpdateGoodsInput struct {
	GoodsID, ExpectedVersion int64
	Name                     *string
	Content
	CategoryID    *int64
	ClearCategory bool
	// PurchaseLimit sets the goods' purchase limit; ClearPurchaseLimit
	// takes it away.
	PurchaseLimit      *int64
	ClearPurchaseLimit bool
	// ShippingTemplateID moves the goods under that freight template;
	// ClearShippingTemplate makes it ship free (shipping.go).
	ShippingTemplateID    *int64
	ClearShippingTemplate bool
}

// UpdateGoods applies the edit: a catalog edit like any other (the version
// moves, views reload), with the goods' listing rows rewritten in the same
// transaction. Setting a purchase limit counts the units customers already
// hold in orders that stand (Config.OnPurchaseLimit): with 3 held, a limit
// of 2 refuses their next order.
func (s *Service) UpdateGoods(ctx context.Context, in UpdateGoodsInput) (*Goods, error) {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if err := checkName("goods name", name, 120); err != nil {
			return nil, err
		}
		in.Name = &name
	}
	if err := in.Content.check(); err != nil {
		return nil, err
	}
	if in.ClearCategory && in.CategoryID != nil {
		return nil, fmt.Errorf("%w: give categoryId or clearCategory, not both", errs.InvalidInput)
	}
	if err := checkPurchaseLimit(in.PurchaseLimit); err != nil {
		return nil, err
	}
	if in.ClearPurchaseLimit && in.PurchaseLimit != nil {
		return nil, fmt.Errorf("%w: give purchaseLimit or clearPurchaseLimit, not both", errs.InvalidInput)
	}
	if in.ClearShippingTemplate && in.ShippingTemplateID != nil {
		return nil, fmt.Errorf("%w: give shippingTemplateId or clearShippingTemplate, not both", errs.InvalidInput)
	}
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		err := bumpGoods(ctx, tx, in.GoodsID, &in.ExpectedVersion, func(u *ent.GoodsUpdate) {
			if in.Name != nil {
				u.SetName(*in.Name)
			}
			if in.Description != nil {
				u.SetDescription(*in.Description)
			}
			if in.Images != nil {
				u.SetImages(*in.Images)
			}
			u.SetNillableSlug(in.Slug).SetNillableCategoryID(in.CategoryID)
			if in.ClearCategory {
				u.ClearCategoryID()
			}
			u.SetNillablePurchaseLimit(in.PurchaseLimit)
			if in.ClearPurchaseLimit {
				u.ClearPurchaseLimit()
			}
			shipUnder(u, in.ShippingTemplateID, in.ClearShippingTemplate)
		})
		if err != nil {
			return slugError(err)
		}
		// A limit set counts what customers hold already, under the goods'
		// lock bumpGoods took, before any plain read of this transaction
		// (CountHeld says why); the checks read after it.
		if in.PurchaseLimit != nil && s.cfg.OnPurchaseLimit != nil {
			if err := s.cfg.OnPurchaseLimit(ctx, tx, in.GoodsID); err != nil {
				return err
			}
		}
		if err := checkCategory(ctx, tx, in.CategoryID); err != nil {
			return err
		}
		if err := checkTemplate(ctx, tx, in.ShippingTemplateID); err != nil {
			return err
		}
		return listing.Refresh(ctx, tx, in.GoodsID)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	s.changed(in.GoodsID)
	return s.Goods(ctx, Viewer{Admin: true}, in.GoodsID)
}

// maxPurchaseLimit bounds a goods' purchase limit (an order holds at most
// MaxQuantity units of a SKU anyway).
const maxPurchaseLimit = 1_000_000

// checkPurchaseLimit refuses a limit below one or past maxPurchaseLimit.
func checkPurchaseLimit(limit *int64) error {
	if limit != nil && (*limit < 1 || *limit > maxPurchaseLimit) {
		return fmt.Errorf("%w: purchaseLimit %d, want 1 to %d (null: none)", errs.InvalidInput, *limit, maxPurchaseLimit)
	}
	return nil
}
