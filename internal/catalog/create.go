package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"storefront/ent"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/limits"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// SpecInput is a dimension and its value names, in display order.
type SpecInput struct {
	Name   string
	Values []string
}

// SkuTerms are the per-SKU commercial terms an admin sets.
type SkuTerms struct {
	SellPrice, LineationPrice, CostPrice money.Money
	Stock                                int64
	WeightGrams                          int64 // one unit's shipping weight
}

// SkuOverride sets terms for one combination, named by its value names.
type SkuOverride struct {
	Values []string
	SkuTerms
	SkuCode *string
	Enabled *bool
}

// CreateInput is a new goods; the backend generates its SKUs.
type CreateInput struct {
	Name, Code string
	Status     enums.GoodsStatus
	// StockMode is when orders take stock; "" is DEDUCT_AT_ORDER, the mode
	// of every goods created before lock-at-order existed.
	StockMode  enums.StockMode
	Specs      []SpecInput
	DefaultSku SkuTerms
	Skus       []SkuOverride
	Content
	CategoryID *int64
	// PurchaseLimit is the units one customer may hold in orders that
	// stand (nil: no limit; internal/promo).
	PurchaseLimit *int64
	// ShippingTemplateID charges its orders' shipping by that freight
	// template; nil: it ships free.
	ShippingTemplateID *int64
}

// Create validates the input, generates the cartesian product of the specs
// and writes goods, specs, values, SKUs and one opening ledger row per SKU in
// one transaction: it either all exists or none of it does.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Goods, error) {
	in = in.trimmed()
	if in.StockMode == "" {
		in.StockMode = enums.DeductAtOrder
	}
	if err := in.Content.check(); err != nil {
		return nil, err
	}
	if err := checkPurchaseLimit(in.PurchaseLimit); err != nil {
		return nil, err
	}
	plan, err := s.planCreate(in)
	if err != nil {
		return nil, err
	}
	var id int64
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		// The tree first, as in every goods edit (bumpGoods): Add reads it.
		if err := listing.LockTree(ctx, tx); err != nil {
			return err
		}
		if err := checkCategory(ctx, tx, in.CategoryID); err != nil {
			return err
		}
		if err := checkTemplate(ctx, tx, in.ShippingTemplateID); err != nil {
			return err
		}
		if id, err = writeCreate(ctx, tx, in, plan); err != nil {
			return err
		}
		if in.Slug == nil {
			if err := nameGoods(ctx, tx, id, in.Code); err != nil {
				return err
			}
		}
		return listing.Add(ctx, tx, id)
	})
	if err != nil {
		return nil, err
	}
	s.changed(id)
	return s.Goods(ctx, Viewer{Admin: true}, id)
}

type plannedSku struct {
	valueIdx []int // per dimension, index into that spec's values
	terms    SkuTerms
	code     *string
	enabled  bool
}

func (s *Service) planCreate(in CreateInput) ([]plannedSku, error) {
	if err := checkName("goods name", in.Name, 120); err != nil {
		return nil, err
	}
	if len(in.Code) > 64 {
		return nil, fmt.Errorf("%w: goods code is longer than 64 bytes", errs.InvalidInput)
	}
	if in.Status == "" {
		return nil, fmt.Errorf("%w: goods status is required", errs.InvalidInput)
	}
	// GraphQL refuses unknown enum values itself; Go callers may not.
	if !slices.Contains(in.StockMode.Values(), string(in.StockMode)) {
		return nil, fmt.Errorf("%w: stock mode %q", errs.InvalidInput, in.StockMode)
	}
	dims := make([][]int64, len(in.Specs))
	// Placeholders stand in for value ids until the values exist; they must be
	// unique across dimensions, like the ids will be.
	placeholder := map[int64][2]int{}
	seenSpec := map[string]bool{}
	for i, sp := range in.Specs {
		if err := checkName("spec name", sp.Name, 64); err != nil {
			return nil, err
		}
		if seenSpec[sp.Name] {
			return nil, fmt.Errorf("%w: duplicate spec name %q", errs.InvalidInput, sp.Name)
		}
		seenSpec[sp.Name] = true
		seenVal := map[string]bool{}
		for j, v := range sp.Values {
			if err := checkValueName(v); err != nil {
				return nil, err
			}
			if seenVal[v] {
				return nil, fmt.Errorf("%w: duplicate value %q in spec %q", errs.InvalidInput, v, sp.Name)
			}
			seenVal[v] = true
			id := int64(len(placeholder) + 1)
			placeholder[id] = [2]int{i, j}
			dims[i] = append(dims[i], id)
		}
	}
	combos, err := skumatrix.Cartesian(dims, s.cfg.Limits)
	if err != nil {
		return nil, err
	}
	if err := s.checkTerms(in.DefaultSku); err != nil {
		return nil, err
	}
	plan := make([]plannedSku, len(combos))
	names := make([][]string, len(combos))
	index := map[string]int{}
	for k, combo := range combos {
		idx := make([]int, len(combo))
		names[k] = make([]string, len(combo))
		for d, id := range combo {
			idx[d] = placeholder[id][1]
			names[k][d] = in.Specs[d].Values[idx[d]]
		}
		plan[k] = plannedSku{valueIdx: idx, terms: in.DefaultSku, enabled: true}
		index[strings.Join(names[k], "\x00")] = k
	}
	codes := map[string]bool{}
	for _, o := range in.Skus {
		k, ok := index[strings.Join(o.Values, "\x00")]
		if !ok || len(o.Values) != len(in.Specs) {
			return nil, fmt.Errorf("%w: SKU %v is not a combination of the specs (give one value per spec, in spec order)", errs.InvalidInput, o.Values)
		}
		if err := s.checkTerms(o.SkuTerms); err != nil {
			return nil, fmt.Errorf("SKU %v: %w", o.Values, err)
		}
		plan[k].terms = o.SkuTerms
		if o.Enabled != nil {
			plan[k].enabled = *o.Enabled
		}
		if err := checkCode(o.SkuCode); err != nil {
			return nil, err
		}
		if code := normaliseCode(o.SkuCode); code != nil {
			if codes[*code] {
				return nil, fmt.Errorf("%w: skuCode %q is given twice", errs.InvalidInput, *code)
			}
			codes[*code] = true
			plan[k].code = code
		}
	}
	// Checked per SKU, after the entries: DefaultSku may be left at zero
	// when an entry prices every combination.
	for k, p := range plan {
		if err := checkSellPrice(skuLabel(names[k]), p.terms.SellPrice); err != nil {
			return nil, fmt.Errorf("%w (give defaultSku or an entry in skus)", err)
		}
	}
	return plan, nil
}

func writeCreate(ctx context.Context, tx *ent.Tx, in CreateInput, plan []plannedSku) (int64, error) {
	specType := enums.SpecMulti
	if len(in.Specs) == 0 {
		specType = enums.SpecSingle
	}
	g, err := tx.Goods.Create().SetName(in.Name).SetCode(in.Code).SetStatus(in.Status).SetSpecType(specType).
		SetStockMode(in.StockMode).SetDescription(valueOr(in.Description, "")).SetImages(valueOr(in.Images, nil)).
		SetNillableSlug(in.Slug).SetNillableCategoryID(in.CategoryID).SetNillablePurchaseLimit(in.PurchaseLimit).
		SetNillableShippingTemplateID(in.ShippingTemplateID).Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("creating goods: %w", slugError(err))
	}
	specIDs := make([]int64, len(in.Specs))
	var values []*ent.SpecValueCreate
	for i, sp := range in.Specs {
		spRow, err := tx.Spec.Create().SetGoodsID(g.ID).SetName(sp.Name).SetSort(i).Save(ctx)
		if err != nil {
			return 0, fmt.Errorf("creating spec %q: %w", sp.Name, err)
		}
		specIDs[i] = spRow.ID
		for j, v := range sp.Values {
			values = append(values, tx.SpecValue.Create().SetSpecID(spRow.ID).SetGoodsID(g.ID).SetName(v).SetSort(j))
		}
	}
	valueIDs, err := createValues(ctx, tx, specIDs, values)
	if err != nil {
		return 0, err
	}
	builders := make([]*ent.SkuCreate, len(plan))
	opening := make([]int64, len(plan))
	for k, p := range plan {
		opening[k] = p.terms.Stock
		ids := make([]int64, len(p.valueIdx))
		names := make([]string, len(p.valueIdx))
		for d, j := range p.valueIdx {
			names[d] = in.Specs[d].Values[j]
			ids[d] = valueIDs[valueKey{specIDs[d], names[d]}]
		}
		builders[k] = newSku(tx, g.ID, ids, names, p)
	}
	skus, err := createSkus(ctx, tx, builders)
	if err != nil {
		return 0, err
	}
	return g.ID, bookOpening(ctx, tx, skus, opening)
}

func newSku(tx *ent.Tx, goodsID int64, ids []int64, names []string, p plannedSku) *ent.SkuCreate {
	status := enums.SkuEnabled
	if !p.enabled {
		status = enums.SkuDisabled
	}
	return tx.Sku.Create().SetGoodsID(goodsID).
		SetSpecValueIds(formatIDList(ids)).SetSpecValueStr(strings.Join(names, valueSeparator)).
		SetSpecKey(skumatrix.SpecKey(ids)).SetNillableSkuCode(p.code).
		SetSellPrice(p.terms.SellPrice).SetLineationPrice(p.terms.LineationPrice).SetCostPrice(p.terms.CostPrice).
		SetWeightGrams(p.terms.WeightGrams).
		SetStatus(status) // stock starts at 0: inventory opens it (bookOpening)
}

// ErrSkuCodeTaken reports a skuCode already used by another SKU.
var ErrSkuCodeTaken = fmt.Errorf("%w: skuCode is already used by another SKU", errs.InvalidInput)

// skuWriteError names which unique key refused the write.
func skuWriteError(err error) error {
	if !ent.IsConstraintError(err) {
		return fmt.Errorf("writing SKUs: %w", err)
	}
	if strings.Contains(err.Error(), "sku_code") {
		return errors.Join(ErrSkuCodeTaken, err)
	}
	return fmt.Errorf("%w: a SKU with the same spec combination already exists: %v", errs.VersionConflict, err)
}

// bookOpening hands the new SKUs' opening stock (opening[i] for skus[i]) to
// inventory, stock's one writer: it sets the stock and books the opening
// ledger rows.
func bookOpening(ctx context.Context, tx *ent.Tx, skus []*ent.Sku, opening []int64) error {
	o := make([]inventory.Opening, len(skus))
	for i, s := range skus {
		o[i] = inventory.Opening{ItemID: s.ID, GoodsID: s.GoodsID, Num: opening[i]}
	}
	return inventory.Open(ctx, tx, o)
}

func (s *Service) checkTerms(t SkuTerms) error {
	for _, p := range []struct {
		name string
		v    money.Money
	}{{"sellPrice", t.SellPrice}, {"lineationPrice", t.LineationPrice}, {"costPrice", t.CostPrice}} {
		if p.v < 0 {
			return fmt.Errorf("%w: %s %s is negative", errs.InvalidInput, p.name, p.v)
		}
		if p.v > s.cfg.MaxPrice {
			return fmt.Errorf("%w: %s %s is above the maximum %s", errs.InvalidInput, p.name, p.v, s.cfg.MaxPrice)
		}
	}
	if t.Stock < 0 || t.Stock > limits.MaxStock {
		return fmt.Errorf("%w: stock %d must be between 0 and %d", errs.InvalidInput, t.Stock, limits.MaxStock)
	}
	return checkWeight(t.WeightGrams)
}

func checkName(what, s string, maxLen int) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: %s is empty", errs.InvalidInput, what)
	}
	// A control character is no part of a name, and PostgreSQL's text cannot
	// hold NUL: refused alike on every database.
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%w: %s %q holds a control character at byte %d", errs.InvalidInput, what, s, i)
	}
	// Bytes, not characters: ent's MaxLen validator counts bytes, and a name
	// it refuses would surface as an internal error instead of bad input.
	if len(s) > maxLen {
		return fmt.Errorf("%w: %s %q is longer than %d bytes (a Chinese character takes 3)", errs.InvalidInput, what, s, maxLen)
	}
	return nil
}

// normaliseCode stores "no code" as NULL: an empty string would take part in
// the unique index (seed 003, 3.4).
func normaliseCode(c *string) *string {
	if c == nil || strings.TrimSpace(*c) == "" {
		return nil
	}
	v := strings.TrimSpace(*c)
	return &v
}

func checkCode(c *string) error {
	if c := normaliseCode(c); c != nil && len(*c) > 64 {
		return fmt.Errorf("%w: skuCode %q is longer than 64 bytes", errs.InvalidInput, *c)
	}
	return nil
}
