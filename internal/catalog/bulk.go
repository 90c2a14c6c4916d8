package catalog

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/specvalue"
)

// Multi-row INSERTs learn their rows' ids by a unique key, never from the
// INSERT itself: on MySQL ent's CreateBulk computes them as LAST_INSERT_ID()
// + i, which is wrong as soon as auto_increment_increment is not 1 (a Galera
// cluster sets it to the cluster size) or another multi-row insert interleaves
// (innodb_autoinc_lock_mode = 2). A wrong id here is a SKU naming another
// goods' spec value, or an opening ledger row booked to another SKU. Single-row
// inserts (goods, specs, the values an edit adds) are right as they are:
// LAST_INSERT_ID() is the id of that one row.

// batchSize keeps each statement well under SQLite's and MySQL's placeholder
// limits (a SKU row binds 13 values).
const batchSize = 200

// valueKey names a spec value among the values of new specs: planCreate
// refuses duplicate names in a spec, so (spec, name) is unique there.
type valueKey struct {
	spec int64
	name string
}

// createValues inserts the values of new specs and returns their ids by
// (spec, name). specIDs are those specs; no other value may name them yet.
func createValues(ctx context.Context, tx *ent.Tx, specIDs []int64, builders []*ent.SpecValueCreate) (map[valueKey]int64, error) {
	for start := 0; start < len(builders); start += batchSize {
		if err := tx.SpecValue.CreateBulk(builders[start:min(start+batchSize, len(builders))]...).Exec(ctx); err != nil {
			return nil, fmt.Errorf("creating spec values: %w", err)
		}
	}
	rows, err := tx.SpecValue.Query().Where(specvalue.SpecIDIn(specIDs...)).
		Select(specvalue.FieldID, specvalue.FieldSpecID, specvalue.FieldName).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading back spec values: %w", err)
	}
	ids := make(map[valueKey]int64, len(rows))
	for _, r := range rows {
		ids[valueKey{r.SpecID, r.Name}] = r.ID
	}
	if len(ids) != len(builders) || len(rows) != len(builders) {
		return nil, fmt.Errorf("reading back spec values: %d rows under specs %v, %d written", len(rows), specIDs, len(builders))
	}
	return ids, nil
}

// createSkus inserts the SKUs of one goods and returns their rows, in the
// builders' order, read back by (goods, spec key): the unique key that also
// refuses a combination written twice.
func createSkus(ctx context.Context, tx *ent.Tx, builders []*ent.SkuCreate) ([]*ent.Sku, error) {
	if len(builders) == 0 {
		return nil, nil
	}
	goodsID, _ := builders[0].Mutation().GoodsID()
	out := make([]*ent.Sku, 0, len(builders))
	for start := 0; start < len(builders); start += batchSize {
		chunk := builders[start:min(start+batchSize, len(builders))]
		keys := make([]string, len(chunk))
		for i, b := range chunk {
			if g, _ := b.Mutation().GoodsID(); g != goodsID {
				return nil, fmt.Errorf("creating SKUs: goods %d and %d in one call", goodsID, g)
			}
			keys[i], _ = b.Mutation().SpecKey()
		}
		if err := tx.Sku.CreateBulk(chunk...).Exec(ctx); err != nil {
			return nil, skuWriteError(err)
		}
		rows, err := tx.Sku.Query().Where(sku.GoodsID(goodsID), sku.SpecKeyIn(keys...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading back SKUs of goods %d: %w", goodsID, err)
		}
		byKey := make(map[string]*ent.Sku, len(rows))
		for _, r := range rows {
			byKey[r.SpecKey] = r
		}
		for _, k := range keys {
			r := byKey[k]
			if r == nil {
				return nil, fmt.Errorf("reading back SKUs of goods %d: spec key %q is missing", goodsID, k)
			}
			out = append(out, r)
		}
	}
	return out, nil
}
