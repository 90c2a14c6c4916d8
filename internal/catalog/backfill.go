package catalog

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/goodslisting"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// Backfill gives every goods written before slugs and the listing existed
// its slug (goods-<id>: its code may clash) and its listing rows, a
// hundred goods per transaction; it returns how many it listed. Run by
// migrate: a schema upgrade must not leave goods missing from listings.
func Backfill(ctx context.Context, db *store.DB) (int, error) {
	done := 0
	for {
		ids, err := db.Client.Goods.Query().Where(func(s *entsql.Selector) {
			s.Where(entsql.ExprP("NOT EXISTS (SELECT 1 FROM " + goodslisting.Table + " l WHERE l." + goodslisting.FieldGoodsID +
				" = " + s.C(goods.FieldID) + ")"))
		}).Limit(100).IDs(ctx)
		if err != nil || len(ids) == 0 {
			return done, store.Classify(err)
		}
		err = store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			for _, id := range ids {
				if err := tx.Goods.Update().Where(goods.ID(id), goods.SlugIsNil()).SetSlug(fmt.Sprintf("goods-%d", id)).Exec(ctx); err != nil {
					return err
				}
			}
			return listing.Refresh(ctx, tx, ids...)
		})
		if err != nil {
			return done, store.Classify(fmt.Errorf("backfilling the listing: %w", err))
		}
		done += len(ids)
	}
}
