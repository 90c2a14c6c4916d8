package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/limits"
)

// oneSku creates a single-spec goods with the given stock and returns its SKU.
func oneSku(t *testing.T, db *store.DB, stock int64) *ent.Sku {
	t.Helper()
	g, err := catalog.New(db, catalog.DefaultConfig()).Create(context.Background(), catalog.CreateInput{
		Name: "杯子", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 1000, Stock: stock}})
	if err != nil {
		t.Fatal(err)
	}
	return db.Client.Sku.GetX(context.Background(), g.SkuList(false)[0].ID)
}

func ledger(t *testing.T, db *store.DB, id int64) (rows []*ent.StockLog, sum int64) {
	t.Helper()
	rows = db.Client.StockLog.Query().Where(stocklog.ItemID(id)).Order(ent.Asc(stocklog.FieldID)).AllX(context.Background())
	for _, r := range rows {
		sum += r.ChangeNum
	}
	return rows, sum
}

func TestAdjust(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		got, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -4, Reason: "damaged"})
		if err != nil || got.Stock != 6 || got.StockVersion != s.StockVersion+1 || got.Version != s.Version {
			t.Fatalf("Adjust(-4) = %+v, %v", got, err)
		}
		rows, sum := ledger(t, db, s.ID)
		last := rows[len(rows)-1]
		if len(rows) != 2 || last.ChangeType != 5 || last.BizType != "manual" || last.ChangeNum != -4 ||
			last.BeforeStock != 10 || last.AfterStock != 6 || last.Remark != "damaged" || last.BizSn == "" || sum != 6 {
			t.Errorf("ledger after Adjust(-4): %+v (sum %d)", last, sum)
		}
		if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -7, Reason: "x"}); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("Adjust(-7) on 6: %v, want ErrOutOfStock", err)
		}
		for name, in := range map[string]inventory.AdjustInput{
			"zero":      {ItemID: s.ID, Delta: 0, Reason: "x"},
			"no reason": {ItemID: s.ID, Delta: 1, Reason: " "},
			"absurd":    {ItemID: s.ID, Delta: limits.MaxStock + 1, Reason: "x"},
		} {
			if _, err := inv.Adjust(ctx, in); !errors.Is(err, inventory.ErrInvalidInput) {
				t.Errorf("%s: %v, want ErrInvalidInput", name, err)
			}
		}
		if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: 999999, Delta: 1, Reason: "x"}); !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("unknown SKU: %v", err)
		}
		if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: 999999, Delta: -1, Reason: "x"}); !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("unknown SKU, negative: %v", err)
		}
		if rows2, _ := ledger(t, db, s.ID); len(rows2) != 2 || db.Client.Sku.GetX(ctx, s.ID).Stock != 6 {
			t.Errorf("refused adjustments wrote: %d ledger rows", len(rows2))
		}
	})
}

func TestAdjustSameBizSnAppliesOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		in := inventory.AdjustInput{ItemID: s.ID, Delta: 5, Reason: "delivery", BizSn: "PO-1"}
		first, err := inv.Adjust(ctx, in)
		if err != nil || first.Stock != 15 {
			t.Fatalf("first: %+v, %v", first, err)
		}
		again, err := inv.Adjust(ctx, in)
		if err != nil || again.Stock != 15 || again.Version != first.Version {
			t.Fatalf("repeat: %+v, %v; want the SKU unchanged", again, err)
		}
		// Copies racing each other: the unique ledger key lets one through.
		const n = 10
		race := inventory.AdjustInput{ItemID: s.ID, Delta: 3, Reason: "delivery", BizSn: "PO-2"}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = inv.Adjust(ctx, race) }()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Errorf("racing copy: %v", err)
			}
		}
		rows, sum := ledger(t, db, s.ID)
		if stock := db.Client.Sku.GetX(ctx, s.ID).Stock; stock != 18 || len(rows) != 3 || sum != 18 {
			t.Errorf("stock %d, %d ledger rows, sum %d; want 18, 3, 18", stock, len(rows), sum)
		}
	})
}

// The claim: 50 concurrent +1 and 50 concurrent -1 on one SKU leave
// stock where it started, with 100 ledger rows summing to the change (0).
func TestConcurrentAdjustBalances(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 100)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 100)
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				delta := int64(1)
				if i%2 == 1 {
					delta = -1
				}
				<-start
				_, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: delta, Reason: "race"})
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Adjust: %v", err)
			}
		}
		rows, sum := ledger(t, db, s.ID)
		got := db.Client.Sku.GetX(ctx, s.ID)
		if got.Stock != 100 || len(rows) != 101 || sum != 100 || got.StockVersion != s.StockVersion+100 || got.Version != s.Version {
			t.Errorf("stock %d (want 100), %d manual rows (want 100), ledger sum %d, stock version +%d (want +100), version +%d (want +0)",
				got.Stock, len(rows)-1, sum, got.StockVersion-s.StockVersion, got.Version-s.Version)
		}
		// The rows chain: each change saw exactly the balance the previous one
		// left. Ids follow the SKU row lock (the ledger insert happens while the
		// UPDATE holds it), so id order is the order the changes applied in.
		for i := 1; i < len(rows); i++ {
			if r := rows[i]; r.BeforeStock != rows[i-1].AfterStock || r.AfterStock-r.BeforeStock != r.ChangeNum {
				t.Errorf("ledger row %d (%d -> %d, %+d) does not follow row %d (-> %d)",
					r.ID, r.BeforeStock, r.AfterStock, r.ChangeNum, rows[i-1].ID, rows[i-1].AfterStock)
			}
		}
	})
}

// More takers than stock: exactly the stock's worth succeed, the rest are
// ErrOutOfStock, and stock never goes below zero.
func TestConcurrentNegativeAdjustNeverOversells(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, out := 0, 0
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -1, Reason: "race"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, inventory.ErrOutOfStock):
					out++
				default:
					t.Errorf("Adjust: %v", err)
				}
			}()
		}
		wg.Wait()
		_, sum := ledger(t, db, s.ID)
		if stock := db.Client.Sku.GetX(ctx, s.ID).Stock; ok != 10 || out != 20 || stock != 0 || sum != 0 {
			t.Errorf("%d succeeded, %d out of stock, stock %d, ledger sum %d; want 10, 20, 0, 0", ok, out, stock, sum)
		}
	})
}

func TestSetStock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 100)
		// A sale lands while the admin's form is open at version s.Version.
		moved, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -10, Reason: "sale"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: s.ID, Stock: 80, ExpectedVersion: s.StockVersion, Reason: "form"}); !errors.Is(err, inventory.ErrVersionConflict) {
			t.Fatalf("stale form: %v, want ErrVersionConflict", err)
		}
		if rows, _ := ledger(t, db, s.ID); len(rows) != 2 {
			t.Errorf("the refused form wrote a ledger row")
		}
		got, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: s.ID, Stock: 80, ExpectedVersion: moved.StockVersion, Reason: "form"})
		if err != nil || got.Stock != 80 {
			t.Fatalf("SetStock = %+v, %v", got, err)
		}
		rows, sum := ledger(t, db, s.ID)
		last := rows[len(rows)-1]
		if last.ChangeType != 5 || last.ChangeNum != -10 || last.BeforeStock != 90 || last.AfterStock != 80 || last.BizType != "manual" || sum != 80 {
			t.Errorf("SetStock booked %+v (sum %d), want a -10 adjustment", last, sum)
		}
		same, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: s.ID, Stock: 80, ExpectedVersion: got.StockVersion, Reason: "form"})
		if err != nil || same.StockVersion != got.StockVersion {
			t.Errorf("unchanged value: %+v, %v; want no write", same, err)
		}
		if _, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: s.ID, Stock: -1, ExpectedVersion: got.StockVersion, Reason: "x"}); !errors.Is(err, inventory.ErrInvalidInput) {
			t.Errorf("negative stock: %v", err)
		}
		if _, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: 999999, Stock: 1, ExpectedVersion: 1, Reason: "x"}); !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("unknown SKU: %v", err)
		}
	})
}

func TestStocktake(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 50)
		got, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: s.ID, Counted: 47, Reason: "monthly count"})
		if err != nil || got.Stock != 47 {
			t.Fatalf("Stocktake = %+v, %v", got, err)
		}
		rows, sum := ledger(t, db, s.ID)
		last := rows[len(rows)-1]
		if last.ChangeType != 6 || last.ChangeNum != -3 || last.BeforeStock != 50 || last.AfterStock != 47 || last.Remark != "monthly count" || sum != 47 {
			t.Errorf("stocktake row %+v (sum %d)", last, sum)
		}
		if _, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: s.ID, Counted: -1, Reason: "x"}); !errors.Is(err, inventory.ErrInvalidInput) {
			t.Errorf("negative count: %v", err)
		}
	})
}

func TestLedgerPaging(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 0)
		for i := range 5 {
			if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: int64(i + 1), Reason: fmt.Sprint("r", i)}); err != nil {
				t.Fatal(err)
			}
		}
		var nums []int64
		after := ""
		for {
			p, err := inv.Ledger(ctx, s.ID, 2, after)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range p.Rows {
				nums = append(nums, r.ChangeNum)
			}
			if !p.HasNextPage {
				break
			}
			after = inventory.Cursor(p.Rows[len(p.Rows)-1].ID)
		}
		if fmt.Sprint(nums) != "[5 4 3 2 1 0]" {
			t.Errorf("ledger newest first = %v, want [5 4 3 2 1 0]", nums)
		}
		if _, err := inv.Ledger(ctx, 999999, 10, ""); !errors.Is(err, inventory.ErrNotFound) {
			t.Errorf("unknown SKU: %v", err)
		}
		if _, err := inv.Ledger(ctx, s.ID, 10, "nonsense"); !errors.Is(err, inventory.ErrInvalidInput) {
			t.Errorf("bad cursor: %v", err)
		}
		if _, err := inv.Ledger(ctx, s.ID, -1, ""); !errors.Is(err, inventory.ErrInvalidInput) {
			t.Errorf("negative first: %v", err)
		}
	})
}

func TestLedgerFirstIsCapped(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 0)
		for i := range inventory.MaxPageSize + 5 {
			if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				return inventory.Book(ctx, tx, inventory.Entry{ItemID: s.ID, GoodsID: s.GoodsID, Type: inventory.Adjust,
					BizType: "test", BizSn: fmt.Sprint(i)})
			}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := inv.Ledger(ctx, s.ID, 1000, "")
		if err != nil || len(p.Rows) != inventory.MaxPageSize || !p.HasNextPage {
			t.Errorf("first=1000 gave %d rows (next page %v), %v; want %d", len(p.Rows), p.HasNextPage, err, inventory.MaxPageSize)
		}
	})
}
