package shipping

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"storefront/ent/schema"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// What checkout and the cart read to price an order's shipping, through
// their own querier (a client, or the transaction placing the order).

// Querier is a client or a transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ReadAddress is user's address id as an order copies it, with its
// region's names; NOT_FOUND when the book has no such entry, and
// INVALID_INPUT when its regionCode is not a district of the table (an
// entry written before codes were checked, or a code the table no longer
// has): no order ships to a place the fee cannot know.
func ReadAddress(ctx context.Context, q Querier, user string, id int64) (*OrderAddress, error) {
	rs, err := q.QueryContext(ctx, "SELECT name, phone, region_code, province, city, district, line, postal_code FROM address WHERE id = ? AND user_id = ?", id, user)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading address %d: %w", id, err))
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return nil, store.Classify(err)
		}
		return nil, fmt.Errorf("%w: no address %d in your book", errs.NotFound, id)
	}
	a := &OrderAddress{}
	if err := rs.Scan(&a.Name, &a.Phone, &a.RegionCode, &a.Province, &a.City, &a.District, &a.Line, &a.PostalCode); err != nil {
		return nil, fmt.Errorf("reading address %d: %w", id, err)
	}
	if err := rs.Err(); err != nil {
		return nil, store.Classify(err)
	}
	r, err := checkRegion(a.RegionCode)
	if err != nil {
		return nil, fmt.Errorf("address %d: %w; edit the address", id, err)
	}
	a.Province, a.City, a.District = r.Province, r.City, r.District
	return a, nil
}

// ReadTemplates reads the templates ids (those that exist).
func ReadTemplates(ctx context.Context, q Querier, ids []int64) (map[int64]*Template, error) {
	out := make(map[int64]*Template, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rs, err := q.QueryContext(ctx, "SELECT id, name, charge_by, rules, free_over, version FROM shipping_template WHERE id IN ("+store.Marks(len(ids))+")", args...)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading freight templates: %w", err))
	}
	defer rs.Close()
	for rs.Next() {
		var (
			t     Template
			rules []byte
			free  sql.NullInt64
		)
		if err := rs.Scan(&t.ID, &t.Name, &t.ChargeBy, &rules, &free, &t.Version); err != nil {
			return nil, fmt.Errorf("reading freight templates: %w", err)
		}
		var stored []schema.TemplateRule
		if err := json.Unmarshal(rules, &stored); err != nil {
			return nil, fmt.Errorf("freight template %d: its rules: %w", t.ID, err)
		}
		t.Rules = rulesOf(stored)
		if free.Valid {
			f := money.Money(free.Int64)
			t.FreeOver = &f
		}
		out[t.ID] = &t
	}
	return out, rs.Err()
}

// Item is a line of a cart to quote.
type Item struct {
	ItemID    int64
	Quantity  int64
	UnitPrice money.Money
}

// Quote is the shipping fee of items for user's address addressID, as an
// order of them would be charged now: nil when no address is given and
// some line ships under a template (the fee depends on where it goes), 0
// when none does. The cart shows it (Cart.cost.shipping).
func (s *Service) Quote(ctx context.Context, user string, addressID *int64, items []Item) (*money.Money, error) {
	lines, err := ReadLines(ctx, s.db.Client, items)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, l := range lines {
		if l.TemplateID != 0 {
			ids = append(ids, l.TemplateID)
		}
	}
	zero := money.Money(0)
	switch {
	case len(ids) == 0:
		return &zero, nil
	case addressID == nil:
		return nil, nil
	}
	a, err := ReadAddress(ctx, s.db.Client, user, *addressID)
	if err != nil {
		return nil, err
	}
	ts, err := ReadTemplates(ctx, s.db.Client, ids)
	if err != nil {
		return nil, err
	}
	fee, err := Fee(a.RegionCode, lines, ts)
	if err != nil {
		return nil, err
	}
	return &fee, nil
}

// ReadLines reads, for items, what the fee needs of their SKUs and goods
// (weight, template, goods name) in one statement; an unknown SKU is left
// out (it ships nothing).
func ReadLines(ctx context.Context, q Querier, items []Item) ([]Line, error) {
	if len(items) == 0 {
		return nil, nil
	}
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it.ItemID
	}
	rs, err := q.QueryContext(ctx, "SELECT s.id, s.goods_id, g.name, COALESCE(g.shipping_template_id, 0), s.weight_grams FROM sku s JOIN goods g ON g.id = s.goods_id WHERE s.id IN ("+store.Marks(len(items))+")", args...)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the SKUs to ship: %w", err))
	}
	defer rs.Close()
	by := map[int64]Line{}
	for rs.Next() {
		var id int64
		var l Line
		if err := rs.Scan(&id, &l.GoodsID, &l.GoodsName, &l.TemplateID, &l.WeightGrams); err != nil {
			return nil, fmt.Errorf("reading the SKUs to ship: %w", err)
		}
		by[id] = l
	}
	if err := rs.Err(); err != nil {
		return nil, store.Classify(err)
	}
	var out []Line
	for _, it := range items {
		if l, ok := by[it.ItemID]; ok {
			l.Quantity, l.Subtotal = it.Quantity, it.UnitPrice*money.Money(it.Quantity)
			out = append(out, l)
		}
	}
	return out, nil
}
