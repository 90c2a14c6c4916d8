package catalog

import (
	"context"
	"fmt"
	"strings"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/sku"
	"storefront/ent/spec"
	"storefront/ent/specvalue"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// SpecEdit is one dimension of the edited goods: with an ID it is that
// existing spec (renamed when the name differs), without one it is new.
type SpecEdit struct {
	ID     *int64
	Name   string
	Values []ValueEdit
}

// ValueEdit is one value of a SpecEdit, with the same ID rule.
type ValueEdit struct {
	ID   *int64
	Name string
}

// SkuEdit sets terms for one combination named by its value names in spec
// order. Nil fields keep an existing SKU's value (new SKUs get zero, and no
// stock). Stock only opens a new SKU: an existing SKU's stock moves through
// the ledger mutations alone.
type SkuEdit struct {
	Values                    []string
	SellPrice                 money.Money
	LineationPrice, CostPrice *money.Money
	Stock                     *int64
	SkuCode                   *string // "" clears the code
	Enabled                   *bool
	WeightGrams               *int64
}

// UpdateSpecsInput is an admin's save of a goods' spec form.
type UpdateSpecsInput struct {
	GoodsID, ExpectedVersion int64
	Specs                    []SpecEdit
	// DefaultSku gives the terms of new combinations no SkuEdit names.
	DefaultSku *SkuTerms
	Skus       []SkuEdit
}

// UpdateSpecs applies a spec form and diffs the SKUs by spec key (seed 003,
// 4.4): combinations that still exist keep their SKU id, new ones get new
// SKUs with opening ledger rows, vanished ones are disabled, removed values
// and specs are disabled; nothing is ever deleted and no id is reused, so
// orders and the ledger keep pointing at the right rows. The version check is
// a CAS on goods.version inside the transaction: of two admins saving the
// same version, exactly one wins and the other gets errs.VersionConflict with
// nothing written.
func (s *Service) UpdateSpecs(ctx context.Context, in UpdateSpecsInput) (*Goods, error) {
	in = in.trimmed()
	if err := s.checkSpecEdit(in); err != nil {
		return nil, err
	}
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		specType := enums.SpecMulti
		if len(in.Specs) == 0 {
			specType = enums.SpecSingle
		}
		if err := bumpGoods(ctx, tx, in.GoodsID, &in.ExpectedVersion, func(u *ent.GoodsUpdate) { u.SetSpecType(specType) }); err != nil {
			return err
		}
		if err := s.writeSpecEdit(ctx, tx, in); err != nil {
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

// bumpGoods increments goods.version; with expected set it is the CAS that
// decides between concurrent editors. It runs first in every catalog edit's
// transaction, so edits of one goods lock the goods row before any SKU row,
// always in that order (no deadlock between two kinds of edit).
//
// It is the first lock of every goods edit, and takes the category tree's
// shared lock before the goods row (listing.LockTree): the edit's Refresh
// reads the tree, and a category move holds the tree before it locks goods.
func bumpGoods(ctx context.Context, tx *ent.Tx, id int64, expected *int64, set func(*ent.GoodsUpdate)) error {
	if err := listing.LockTree(ctx, tx); err != nil {
		return err
	}
	// The UPDATE locks the row on MySQL; PostgreSQL's fair lock comes first
	// (store.LockSpace).
	if err := store.Lock(ctx, tx, store.GoodsLock, store.Exclusive, id); err != nil {
		return err
	}
	u := tx.Goods.Update().Where(goods.ID(id)).AddVersion(1)
	if expected != nil {
		u = u.Where(goods.Version(*expected))
	}
	if set != nil {
		set(u)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("updating goods %d: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	cur, err := tx.Goods.Query().Where(goods.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return fmt.Errorf("%w: goods %d", errs.NotFound, id)
	}
	if err != nil || expected == nil {
		return fmt.Errorf("updating goods %d: no row changed (%v)", id, err)
	}
	return fmt.Errorf("%w: goods %d is at version %d, not %d", errs.VersionConflict, id, cur.Version, *expected)
}

// checkSpecEdit rejects what can be judged without the database, so most
// bad forms never open a transaction.
func (s *Service) checkSpecEdit(in UpdateSpecsInput) error {
	seenSpec, seenSpecID, seenValueID := map[string]bool{}, map[int64]bool{}, map[int64]bool{}
	dims := make([][]int64, len(in.Specs))
	placeholder := int64(0)
	for i, sp := range in.Specs {
		if err := checkName("spec name", sp.Name, 64); err != nil {
			return err
		}
		if seenSpec[sp.Name] {
			return fmt.Errorf("%w: duplicate spec name %q", errs.InvalidInput, sp.Name)
		}
		seenSpec[sp.Name] = true
		if sp.ID != nil {
			if seenSpecID[*sp.ID] {
				return fmt.Errorf("%w: spec %d is given twice", errs.InvalidInput, *sp.ID)
			}
			seenSpecID[*sp.ID] = true
		}
		seenVal := map[string]bool{}
		for _, v := range sp.Values {
			if err := checkValueName(v.Name); err != nil {
				return err
			}
			if seenVal[v.Name] {
				return fmt.Errorf("%w: duplicate value %q in spec %q", errs.InvalidInput, v.Name, sp.Name)
			}
			seenVal[v.Name] = true
			if v.ID != nil {
				if sp.ID == nil {
					return fmt.Errorf("%w: value %d cannot move into the new spec %q", errs.InvalidInput, *v.ID, sp.Name)
				}
				if seenValueID[*v.ID] {
					return fmt.Errorf("%w: value %d is given twice", errs.InvalidInput, *v.ID)
				}
				seenValueID[*v.ID] = true
			}
			placeholder++
			dims[i] = append(dims[i], placeholder)
		}
	}
	// The size limits only depend on counts; check them before any write.
	if _, err := skumatrix.Cartesian(dims, s.cfg.Limits); err != nil {
		return err
	}
	if in.DefaultSku != nil {
		if err := s.checkTerms(*in.DefaultSku); err != nil {
			return fmt.Errorf("defaultSku: %w", err)
		}
		if err := checkSellPrice("defaultSku", in.DefaultSku.SellPrice); err != nil {
			return err
		}
	}
	combos, codes := map[string]bool{}, map[string]bool{}
	for _, e := range in.Skus {
		if err := s.checkTerms(e.terms(nil)); err != nil {
			return fmt.Errorf("SKU %v: %w", e.Values, err)
		}
		if err := checkSellPrice(skuLabel(e.Values), e.SellPrice); err != nil {
			return err
		}
		k := strings.Join(e.Values, "\x00")
		if combos[k] {
			return fmt.Errorf("%w: SKU %v is given twice", errs.InvalidInput, e.Values)
		}
		combos[k] = true
		if err := checkCode(e.SkuCode); err != nil {
			return err
		}
		if c := normaliseCode(e.SkuCode); c != nil {
			if codes[*c] {
				return fmt.Errorf("%w: skuCode %q is given twice", errs.InvalidInput, *c)
			}
			codes[*c] = true
		}
	}
	return nil
}

// terms fills an edit's nil fields from base (an existing SKU), or zero.
func (e SkuEdit) terms(base *ent.Sku) SkuTerms {
	t := SkuTerms{SellPrice: e.SellPrice}
	if base != nil {
		t.LineationPrice, t.CostPrice, t.Stock, t.WeightGrams = base.LineationPrice, base.CostPrice, base.Stock, base.WeightGrams
	}
	if e.WeightGrams != nil {
		t.WeightGrams = *e.WeightGrams
	}
	if e.LineationPrice != nil {
		t.LineationPrice = *e.LineationPrice
	}
	if e.CostPrice != nil {
		t.CostPrice = *e.CostPrice
	}
	if e.Stock != nil {
		t.Stock = *e.Stock
	}
	return t
}

// specState is a goods' specs, values and SKUs as stored, disabled included.
type specState struct {
	specs  map[int64]*ent.Spec
	values map[int64]*ent.SpecValue
	names  map[int64]string // value id -> current name, disabled values too
	skus   map[string]*ent.Sku
	before map[string]bool // spec keys of the product before the edit
}

func (s *Service) loadSpecState(ctx context.Context, tx *ent.Tx, goodsID int64) (*specState, error) {
	specs, err := tx.Spec.Query().Where(spec.GoodsID(goodsID)).Order(spec.BySort(), spec.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	values, err := tx.SpecValue.Query().Where(specvalue.GoodsID(goodsID)).Order(specvalue.BySort(), specvalue.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	skus, err := tx.Sku.Query().Where(sku.GoodsID(goodsID)).All(ctx)
	if err != nil {
		return nil, err
	}
	st := &specState{specs: map[int64]*ent.Spec{}, values: map[int64]*ent.SpecValue{}, names: map[int64]string{},
		skus: map[string]*ent.Sku{}, before: map[string]bool{}}
	activeValues := map[int64][]int64{}
	for _, v := range values {
		st.values[v.ID], st.names[v.ID] = v, v.Name
		if !v.Disabled {
			activeValues[v.SpecID] = append(activeValues[v.SpecID], v.ID)
		}
	}
	var dims [][]int64
	for _, sp := range specs {
		st.specs[sp.ID] = sp
		// Like the product view: a dimension without active values is not shown.
		if !sp.Disabled && len(activeValues[sp.ID]) > 0 {
			dims = append(dims, activeValues[sp.ID])
		}
	}
	for _, r := range skus {
		st.skus[r.SpecKey] = r
	}
	// The old product only tells which combinations were on the page; if it
	// is somehow over today's limits, no combination counts as "was there".
	if combos, err := skumatrix.Cartesian(dims, skumatrix.Limits{MaxDimensions: 64, MaxSKUs: 1 << 20}); err == nil {
		for _, c := range combos {
			st.before[skumatrix.SpecKey(c)] = true
		}
	}
	return st, nil
}

func (s *Service) writeSpecEdit(ctx context.Context, tx *ent.Tx, in UpdateSpecsInput) error {
	st, err := s.loadSpecState(ctx, tx, in.GoodsID)
	if err != nil {
		return err
	}
	dims, err := writeSpecs(ctx, tx, in, st)
	if err != nil {
		return err
	}
	combos, err := skumatrix.Cartesian(dims, s.cfg.Limits)
	if err != nil {
		return err
	}
	edits := map[string]SkuEdit{}
	for _, e := range in.Skus {
		edits[strings.Join(e.Values, "\x00")] = e
	}
	inProduct := map[string]bool{}
	var created []*ent.SkuCreate
	var opening []int64 // the opening stock of created[i]
	for _, combo := range combos {
		names := make([]string, len(combo))
		for d, id := range combo {
			names[d] = st.names[id]
		}
		nameKey := strings.Join(names, "\x00")
		edit, hasEdit := edits[nameKey]
		delete(edits, nameKey)
		key := skumatrix.SpecKey(combo)
		inProduct[key] = true
		if row := st.skus[key]; row != nil {
			if err := s.keepSku(ctx, tx, row, combo, names, editOrNil(edit, hasEdit), st.before[key]); err != nil {
				return err
			}
			continue
		}
		p := plannedSku{enabled: true}
		switch {
		case hasEdit:
			p.terms, p.code = edit.terms(nil), normaliseCode(edit.SkuCode)
			if edit.Enabled != nil {
				p.enabled = *edit.Enabled
			}
		case in.DefaultSku != nil:
			p.terms = *in.DefaultSku
		default:
			return fmt.Errorf("%w: the new combination %v needs a price: give defaultSku or an entry in skus", errs.InvalidInput, names)
		}
		created = append(created, newSku(tx, in.GoodsID, combo, names, p))
		opening = append(opening, p.terms.Stock)
	}
	for _, e := range edits { // any one left over is an error; which one does not matter
		return fmt.Errorf("%w: SKU %v is not a combination of the specs (give one value per spec, in spec order)", errs.InvalidInput, e.Values)
	}
	for key, row := range st.skus {
		if !inProduct[key] {
			if err := retireSku(ctx, tx, row, st.names); err != nil {
				return err
			}
		}
	}
	rows, err := createSkus(ctx, tx, created)
	if err != nil {
		return err
	}
	return bookOpening(ctx, tx, rows, opening)
}

func editOrNil(e SkuEdit, ok bool) *SkuEdit {
	if !ok {
		return nil
	}
	return &e
}

// writeSpecs renames, adds and disables specs and values, and returns the
// new dimensions (value ids in display order).
func writeSpecs(ctx context.Context, tx *ent.Tx, in UpdateSpecsInput, st *specState) ([][]int64, error) {
	keptSpec, keptValue := map[int64]bool{}, map[int64]bool{}
	dims := make([][]int64, len(in.Specs))
	for i, sp := range in.Specs {
		var specID int64
		if sp.ID != nil {
			old := st.specs[*sp.ID]
			if old == nil || old.Disabled {
				return nil, fmt.Errorf("%w: spec %d of goods %d", errs.NotFound, *sp.ID, in.GoodsID)
			}
			specID = old.ID
			if old.Name != sp.Name || old.Sort != i {
				if err := tx.Spec.UpdateOneID(specID).SetName(sp.Name).SetSort(i).Exec(ctx); err != nil {
					return nil, fmt.Errorf("updating spec %d: %w", specID, err)
				}
			}
		} else {
			row, err := tx.Spec.Create().SetGoodsID(in.GoodsID).SetName(sp.Name).SetSort(i).Save(ctx)
			if err != nil {
				return nil, fmt.Errorf("creating spec %q: %w", sp.Name, err)
			}
			specID = row.ID
		}
		keptSpec[specID] = true
		for j, v := range sp.Values {
			if v.ID != nil {
				old := st.values[*v.ID]
				if old == nil || old.Disabled || old.SpecID != specID {
					return nil, fmt.Errorf("%w: value %d of spec %d", errs.NotFound, *v.ID, specID)
				}
				if old.Name != v.Name || old.Sort != j {
					if err := tx.SpecValue.UpdateOneID(old.ID).SetName(v.Name).SetSort(j).Exec(ctx); err != nil {
						return nil, fmt.Errorf("updating value %d: %w", old.ID, err)
					}
				}
				st.names[old.ID] = v.Name
				keptValue[old.ID] = true
				dims[i] = append(dims[i], old.ID)
				continue
			}
			row, err := tx.SpecValue.Create().SetSpecID(specID).SetGoodsID(in.GoodsID).SetName(v.Name).SetSort(j).Save(ctx)
			if err != nil {
				return nil, fmt.Errorf("creating value %q: %w", v.Name, err)
			}
			st.names[row.ID] = v.Name
			keptValue[row.ID] = true
			dims[i] = append(dims[i], row.ID)
		}
	}
	var dropSpecs, dropValues []int64
	for id, sp := range st.specs {
		if !sp.Disabled && !keptSpec[id] {
			dropSpecs = append(dropSpecs, id)
		}
	}
	for id, v := range st.values {
		if !v.Disabled && !keptValue[id] {
			dropValues = append(dropValues, id)
		}
	}
	if len(dropSpecs) > 0 {
		if err := tx.Spec.Update().Where(spec.IDIn(dropSpecs...)).SetDisabled(true).Exec(ctx); err != nil {
			return nil, fmt.Errorf("disabling specs: %w", err)
		}
	}
	if len(dropValues) > 0 {
		if err := tx.SpecValue.Update().Where(specvalue.IDIn(dropValues...)).SetDisabled(true).Exec(ctx); err != nil {
			return nil, fmt.Errorf("disabling values: %w", err)
		}
	}
	return dims, nil
}

// keepSku updates a SKU whose combination is still in the product: display
// order and text follow the specs, an edit sets its terms; stock never moves
// here. A SKU that comes back into the product (it was disabled when it
// left) is enabled again unless the edit says otherwise.
func (s *Service) keepSku(ctx context.Context, tx *ent.Tx, row *ent.Sku, combo []int64, names []string, e *SkuEdit, wasThere bool) error {
	u := tx.Sku.UpdateOneID(row.ID)
	changed := false
	if ids, str := formatIDList(combo), strings.Join(names, valueSeparator); ids != row.SpecValueIds || str != row.SpecValueStr {
		u.SetSpecValueIds(ids).SetSpecValueStr(str)
		changed = true
	}
	status := row.Status
	if !wasThere {
		status = enums.SkuEnabled
	}
	if e != nil {
		t := e.terms(row)
		if t.Stock != row.Stock {
			return fmt.Errorf("%w: SKU %v already exists; its stock changes only through adjustStock, setStock or stocktake", errs.InvalidInput, e.Values)
		}
		if t.SellPrice != row.SellPrice || t.LineationPrice != row.LineationPrice || t.CostPrice != row.CostPrice || t.WeightGrams != row.WeightGrams {
			u.SetSellPrice(t.SellPrice).SetLineationPrice(t.LineationPrice).SetCostPrice(t.CostPrice).SetWeightGrams(t.WeightGrams)
			changed = true
		}
		if e.SkuCode != nil {
			if code := normaliseCode(e.SkuCode); !sameCode(code, row.SkuCode) {
				u.SetNillableSkuCode(code)
				if code == nil {
					u.ClearSkuCode()
				}
				changed = true
			}
		}
		if e.Enabled != nil {
			status = enums.SkuDisabled
			if *e.Enabled {
				status = enums.SkuEnabled
			}
		}
	}
	if status != row.Status {
		u.SetStatus(status)
		changed = true
	}
	if !changed {
		return nil
	}
	if err := u.AddVersion(1).Exec(ctx); err != nil {
		return skuWriteError(err)
	}
	return nil
}

// retireSku disables a SKU whose combination left the product; it is kept
// (orders and the ledger point at it), and its text follows renames.
func retireSku(ctx context.Context, tx *ent.Tx, row *ent.Sku, names map[int64]string) error {
	ids, err := parseIDList(row.SpecValueIds)
	if err != nil {
		return fmt.Errorf("SKU %d: spec_value_ids %q: %w", row.ID, row.SpecValueIds, err)
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = names[id]
	}
	str := strings.Join(parts, valueSeparator)
	if row.Status == enums.SkuDisabled && str == row.SpecValueStr {
		return nil
	}
	return tx.Sku.UpdateOneID(row.ID).SetStatus(enums.SkuDisabled).SetSpecValueStr(str).AddVersion(1).Exec(ctx)
}

func sameCode(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
