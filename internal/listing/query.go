package listing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goodslisting"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/internal/vocab/paging"
)

// Field is what a listing is sorted by (GraphQL's GoodsSortField).
type Field string

const (
	ByID      Field = "ID"
	ByName    Field = "NAME"
	ByPrice   Field = "PRICE"
	ByCreated Field = "CREATED_AT"
	BySales   Field = "SALES"
)

// column is the listing column a field sorts by; every one leads, after
// scope and status, an index that ends in goods_id (the tiebreak).
var column = map[Field]string{ByID: "goods_id", ByName: "name_key", ByPrice: "min_price", ByCreated: "created_at", BySales: "sales"}

// MaxSearch is the longest search term, in characters.
const MaxSearch = 60

// Params select one page of a listing. Statuses empty means every status
// (admins only: the catalog gives customers ON_SHELF alone).
type Params struct {
	Scope              int64
	Statuses           []enums.GoodsStatus
	Search             string
	PriceMin, PriceMax *money.Money
	InStock            *bool
	Sort               Field
	Desc               bool
	First              int
	After              string
	// Count asks for the total over every page (totalCount), one more query.
	Count bool
}

// Page is one page: goods ids in order with their cursors.
type Page struct {
	IDs     []int64
	Cursors []string
	HasNext bool
	Total   int64
}

// ErrBadSearch is a search term the listing cannot take.
var ErrBadSearch = errs.New(errs.InvalidInput, "invalid search")

// Query reads one page of the listing: one index range read in order, plus
// one count when asked for.
func Query(ctx context.Context, c *ent.Client, p Params) (*Page, error) {
	pl, err := plan(p)
	if err != nil {
		return nil, err
	}
	page := &Page{}
	if p.Count {
		if page.Total, err = count(ctx, c, pl.filter, pl.filterArgs); err != nil {
			return nil, err
		}
	}
	switch p.Sort {
	case ByName:
		err = scanPage[string](ctx, c, pl, page)
	case ByCreated:
		err = scanPage[time.Time](ctx, c, pl, page)
	default:
		err = scanPage[int64](ctx, c, pl, page)
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("listing goods: %w", err))
	}
	page.IDs, page.HasNext = paging.Trim(page.IDs, pl.first)
	page.Cursors, _ = paging.Trim(page.Cursors, pl.first)
	return page, nil
}

// Statement is the page query of p as the database receives it (for
// EXPLAIN in tests and docs).
func Statement(dialect string, p Params) (string, []any, error) {
	pl, err := plan(p)
	if err != nil {
		return "", nil, err
	}
	s := entsql.Dialect(dialect).Select().From(entsql.Table(goodslisting.Table))
	pl.sel(s)
	q, args := s.Query()
	return q, args, nil
}

// queryPlan is a page query: its filter (for the count) and its selection.
type queryPlan struct {
	filter     string
	filterArgs []any
	sel        func(*entsql.Selector)
	fp         string
	sort       Field
	first      int
}

func plan(p Params) (*queryPlan, error) {
	first, err := paging.Size(p.First)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
	}
	col, ok := column[p.Sort]
	if !ok {
		return nil, fmt.Errorf("%w: sort field %q", errs.InvalidInput, p.Sort)
	}
	filter, filterArgs, err := filter(p)
	if err != nil {
		return nil, err
	}
	pl := &queryPlan{filter: filter, filterArgs: filterArgs, fp: fingerprint(p), sort: p.Sort, first: first}
	where, args := filter, slices.Clone(filterArgs)
	if p.After != "" {
		after, err := decodeCursor(p.After, pl.fp, p.Sort)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
		}
		cmp := ">"
		if p.Desc {
			cmp = "<"
		}
		if p.Sort == ByID {
			where += " AND goods_id " + cmp + " ?"
			args = append(args, after.id)
		} else {
			where += " AND (" + col + " " + cmp + " ? OR (" + col + " = ? AND goods_id " + cmp + " ?))"
			args = append(args, after.value, after.value, after.id)
		}
	}
	dir := " ASC"
	if p.Desc {
		dir = " DESC"
	}
	pl.sel = func(s *entsql.Selector) {
		order := s.C(col) + dir + ", " + s.C(goodslisting.FieldGoodsID) + dir
		if p.Sort == ByID {
			order = s.C(col) + dir
		}
		s.Select(goodslisting.FieldGoodsID, entsql.As(s.C(col), "v")).Where(entsql.ExprP(where, args...)).
			OrderExpr(entsql.Expr(order)).Limit(first + 1)
	}
	return pl, nil
}

// scanPage reads the page's ids and sort values (of type T) into page.
func scanPage[T any](ctx context.Context, c *ent.Client, pl *queryPlan, page *Page) error {
	var rows []struct {
		ID int64 `sql:"goods_id"`
		V  T     `sql:"v"`
	}
	if err := c.GoodsListing.Query().Modify(pl.sel).Scan(ctx, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		page.IDs = append(page.IDs, r.ID)
		page.Cursors = append(page.Cursors, encodeCursor(pl.fp, pl.sort, &r.V, r.ID))
	}
	return nil
}

func count(ctx context.Context, c *ent.Client, where string, args []any) (int64, error) {
	n, err := c.GoodsListing.Query().Where(func(s *entsql.Selector) { s.Where(entsql.ExprP(where, args...)) }).Count(ctx)
	if err != nil {
		return 0, store.Classify(fmt.Errorf("counting goods: %w", err))
	}
	return int64(n), nil
}

// filter renders the WHERE clause of p without its cursor.
func filter(p Params) (string, []any, error) {
	w := &strings.Builder{}
	w.WriteString("scope = ?")
	args := []any{p.Scope}
	switch len(p.Statuses) {
	case 0:
	case 1: // equality: the planners then read (scope, status, …) in order
		w.WriteString(" AND status = ?")
		args = append(args, string(p.Statuses[0]))
	default:
		w.WriteString(" AND status IN (?" + strings.Repeat(", ?", len(p.Statuses)-1) + ")")
		for _, s := range p.Statuses {
			args = append(args, string(s))
		}
	}
	if p.InStock != nil {
		w.WriteString(" AND in_stock = ?")
		args = append(args, *p.InStock)
	}
	if p.PriceMin != nil || p.PriceMax != nil {
		w.WriteString(" AND min_price <> ?")
		args = append(args, int64(NoPrice))
	}
	if p.PriceMin != nil {
		w.WriteString(" AND min_price >= ?")
		args = append(args, int64(*p.PriceMin))
	}
	if p.PriceMax != nil {
		w.WriteString(" AND min_price <= ?")
		args = append(args, int64(*p.PriceMax))
	}
	if p.Search != "" {
		term, err := SearchTerm(p.Search)
		if err != nil {
			return "", nil, err
		}
		w.WriteString(" AND search_key LIKE ? ESCAPE '!'")
		args = append(args, "%"+likeEscaper.Replace(term)+"%")
	}
	return w.String(), args, nil
}

var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

// SearchTerm is the term a search string looks for: trimmed, lowercased,
// at most MaxSearch characters, no control characters ("" for none).
func SearchTerm(s string) (string, error) {
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n > MaxSearch {
		return "", fmt.Errorf("%w: at most %d characters, got %d", ErrBadSearch, MaxSearch, n)
	}
	if strings.ContainsFunc(s, unicode.IsControl) || !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: control characters", ErrBadSearch)
	}
	return strings.ToLower(s), nil
}
