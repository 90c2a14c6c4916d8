package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/sku"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// BenchCategory is the category a listing benchmark asks for: the first
// root of a generated catalog, with about an eighth of its goods below it.
const BenchCategory = "bench-0"

var (
	benchWords = []string{"纯棉", "真丝", "羊毛", "亚麻", "圆领", "长袖", "T恤", "衬衫", "围巾", "帆布包", "跑鞋", "帽子",
		"Cotton", "Linen", "Wool", "Silk", "Classic", "Slim", "Tee", "Shirt", "Scarf", "Bag", "Shoe", "Cap"}
	seedBatch = 500
)

// SeedBench writes a generated catalog of n single-SKU goods for the
// listing benchmark (storefront seed-bench): a category tree of 8 roots,
// 6 children each and 4 leaves under each child, goods spread over the
// leaves and children, random names (Chinese and Latin), prices, stock and
// sales, 500 goods per transaction through the same writers as any goods
// (opening stock by inventory.Open, sales by inventory.Sold, listing rows
// by listing.Add). progress is called after every transaction.
func (s *Service) SeedBench(ctx context.Context, n int, seed uint64, progress func(done int)) error {
	r := rand.New(rand.NewPCG(seed, 19))
	var places []int64
	for i := range 8 {
		root, err := s.CreateCategory(ctx, CategoryInput{Name: fmt.Sprintf("Bench %d", i), Slug: new(fmt.Sprintf("bench-%d", i))})
		if err != nil {
			return err
		}
		for j := range 6 {
			child, err := s.CreateCategory(ctx, CategoryInput{Name: fmt.Sprintf("Bench %d.%d", i, j), ParentID: &root.ID,
				Slug: new(fmt.Sprintf("bench-%d-%d", i, j))})
			if err != nil {
				return err
			}
			places = append(places, child.ID)
			for k := range 4 {
				leaf, err := s.CreateCategory(ctx, CategoryInput{Name: fmt.Sprintf("Bench %d.%d.%d", i, j, k), ParentID: &child.ID,
					Slug: new(fmt.Sprintf("bench-%d-%d-%d", i, j, k))})
				if err != nil {
					return err
				}
				places = append(places, leaf.ID, leaf.ID)
			}
		}
	}
	start, err := s.db.Client.Goods.Query().Count(ctx)
	if err != nil {
		return store.Classify(err)
	}
	for done := 0; done < n; {
		size := min(seedBatch, n-done)
		err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
			return seedBenchBatch(ctx, tx, r, start+done, size, places)
		})
		if err != nil {
			return fmt.Errorf("seeding goods %d to %d: %w", done, done+size, err)
		}
		done += size
		progress(done)
	}
	return nil
}

func seedBenchBatch(ctx context.Context, tx *ent.Tx, r *rand.Rand, from, size int, places []int64) error {
	builders := make([]*ent.GoodsCreate, size)
	codes := make([]string, size)
	for i := range size {
		codes[i] = fmt.Sprintf("B%07d", from+i)
		name := benchWords[r.IntN(len(benchWords))] + benchWords[r.IntN(len(benchWords))] + " " + benchWords[r.IntN(len(benchWords))]
		status := enums.GoodsOnShelf
		if r.IntN(20) == 0 {
			status = enums.GoodsOffShelf
		}
		builders[i] = tx.Goods.Create().SetName(name).SetCode(codes[i]).SetSlug(fmt.Sprintf("b%07d", from+i)).SetStatus(status).
			SetSpecType(enums.SpecSingle).SetCategoryID(places[r.IntN(len(places))]).SetDescription("Generated for the listing benchmark.")
	}
	if err := tx.Goods.CreateBulk(builders...).Exec(ctx); err != nil {
		return err
	}
	// Ids read back by the unique code, never counted from LAST_INSERT_ID.
	rows, err := tx.Goods.Query().Where(goods.CodeIn(codes...)).All(ctx)
	if err != nil {
		return err
	}
	skus := make([]*ent.SkuCreate, len(rows))
	for i, g := range rows {
		skus[i] = tx.Sku.Create().SetGoodsID(g.ID).SetSellPrice(money.Money(100 * (1 + r.Int64N(2000)))).SetStatus(enums.SkuEnabled)
	}
	if err := tx.Sku.CreateBulk(skus...).Exec(ctx); err != nil {
		return err
	}
	ids := make([]int64, len(rows))
	for i, g := range rows {
		ids[i] = g.ID
	}
	made, err := tx.Sku.Query().Where(sku.GoodsIDIn(ids...)).All(ctx)
	if err != nil {
		return err
	}
	opening := make([]int64, len(made))
	var sold []inventory.RestoreLine
	for i, k := range made {
		if r.IntN(5) > 0 {
			opening[i] = 1 + r.Int64N(50)
		}
		if v := r.Int64N(200); v > 0 && r.IntN(3) > 0 {
			sold = append(sold, inventory.RestoreLine{ItemID: k.ID, GoodsID: k.GoodsID, Num: v})
		}
	}
	if err := bookOpening(ctx, tx, made, opening); err != nil {
		return err
	}
	if err := listing.Add(ctx, tx, ids...); err != nil {
		return err
	}
	return inventory.Sold(ctx, tx, sold)
}
