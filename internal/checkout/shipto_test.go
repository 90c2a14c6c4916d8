package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Placing an order of goods that ship under a freight template, on both
// paths: no address is ADDRESS_REQUIRED (nothing written), an address of
// the buyer's book prices the shipping into the amount and is copied onto
// the order (removing it from the book changes no order), a region no rule
// covers is SHIPPING_UNAVAILABLE, and free goods need no address.
func TestPlaceWithShipping(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db, p))
		home := f.addr(t, "u1", "310104") // Shanghai: 5.00 for 1,000 g + 1.00 per 500 g
		before := f.counts(t)
		for _, items := range [][]ItemInput{{one(f.small, 1)}, {one(f.small, 1), one(f.skuID(t, "黑色,L"), 1)}} {
			_, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: items})
			if !errors.Is(err, shipping.ErrAddressRequired) || !strings.Contains(err.Error(), "不锈钢保温水杯") {
				t.Errorf("%d lines without an address: %v, want ADDRESS_REQUIRED naming the bottle", len(items), err)
			}
		}
		if after := f.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refused orders wrote rows: %v → %v", before, after)
		}

		// 2 × 350 g + 480 g = 1,180 g: 5.00 + 1.00; 197.00 + 6.00.
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.small, 2), one(f.large, 1)}, AddressID: &home})
		if err != nil {
			t.Fatal(err)
		}
		if o.ShippingFee != m("6.00") || o.Amount != m("203.00") || o.ShippingAddress == nil || o.ShippingAddress.RegionCode != "310104" {
			t.Errorf("order = fee %s, amount %s, address %+v; want 6.00, 203.00, 310104", o.ShippingFee, o.Amount, o.ShippingAddress)
		}
		if err := f.ship.RemoveAddress(ctx, "u1", home); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, o.OrderSn); got.ShippingAddress == nil || *got.ShippingAddress != *o.ShippingAddress || got.ShippingFee != o.ShippingFee || got.Amount != o.Amount {
			t.Errorf("after the address left the book the order reads %+v / %s / %s", got.ShippingAddress, got.ShippingFee, got.Amount)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.small, 1)}, AddressID: &home}); !errors.Is(err, errs.NotFound) {
			t.Errorf("a removed address: %v, want NOT_FOUND", err)
		}
		other := f.addr(t, "u2", "110101")
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.small, 1)}, AddressID: &other}); !errors.Is(err, errs.NotFound) {
			t.Errorf("someone else's address: %v, want NOT_FOUND", err)
		}

		// Free over 199.00 of the template's lines; elsewhere 8.00 + 2.00.
		beijing := f.addr(t, "u1", "110101")
		for _, tc := range []struct {
			items []ItemInput
			fee   string
		}{
			{[]ItemInput{one(f.small, 1)}, "8.00"},                              // 350 g
			{[]ItemInput{one(f.small, 3)}, "10.00"},                             // 1,050 g, 177.00
			{[]ItemInput{one(f.large, 3)}, "0.00"},                              // 237.00: free
			{[]ItemInput{one(f.small, 3), one(f.skuID(t, "黑色,L"), 1)}, "10.00"}, // the T-shirt ships free and does not count to 199.00
		} {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: tc.items, AddressID: &beijing})
			if err != nil || o.ShippingFee != m(tc.fee) {
				t.Errorf("%v to Beijing: %v, fee %v; want %s", tc.items, err, o, tc.fee)
			}
		}

		// A template that covers Shanghai only.
		only := f.newTemplate(t, enums.ChargeByPiece, shipping.Rule{RegionCodes: []string{"31"}, FirstUnits: 1, FirstFee: m("9.00"), NextUnits: 1, NextFee: m("1.00")})
		f.underTemplate(t, f.ids["DEMO-BAG"], only)
		bag := f.bagSKU(t)
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(bag, 1)}, AddressID: &beijing}); !errors.Is(err, shipping.ErrUnavailable) ||
			!strings.Contains(err.Error(), "帆布托特包") || !strings.Contains(err.Error(), "110101") {
			t.Errorf("the bag to Beijing: %v, want SHIPPING_UNAVAILABLE naming the bag and 110101", err)
		}

		// Free goods: no address needed, none copied; with one, copied at 0.00.
		free, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.skuID(t, "白色,M"), 1)}})
		if err != nil || free.ShippingFee != 0 || free.ShippingAddress != nil || free.Amount != m("99.00") {
			t.Errorf("a T-shirt without an address: %+v, %v", free, err)
		}
		to, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.skuID(t, "白色,M"), 1)}, AddressID: &beijing})
		if err != nil || to.ShippingFee != 0 || to.ShippingAddress == nil || to.Amount != m("99.00") {
			t.Errorf("a T-shirt with an address: %+v, %v", to, err)
		}

		// The address is part of the request a key stands for.
		key := "ship-key-" + p.name
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.small, 1)}, AddressID: &beijing, IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
		shanghai := f.addr(t, "u1", "310104")
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.small, 1)}, AddressID: &shanghai, IdempotencyKey: key}); !errors.Is(err, ErrIdempotencyKeyReused) {
			t.Errorf("the same key to another address: %v, want IDEMPOTENCY_KEY_REUSED", err)
		}
	})
}

// The fee is the same whatever the order of the lines and however they name
// their SKUs, and the amount with it.
func TestShippingFeeIgnoresLineOrder(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db, p))
		per := f.newTemplate(t, enums.ChargeByPiece, shipping.Rule{RegionCodes: []string{"*"}, FirstUnits: 2, FirstFee: m("10.00"), NextUnits: 2, NextFee: m("3.00")})
		f.underTemplate(t, f.ids["DEMO-TSHIRT"], per)
		to := f.addr(t, "u1", "440305")
		lines := []ItemInput{one(f.small, 2), one(f.skuID(t, "黑色,L"), 3), one(f.large, 1), one(f.skuID(t, "白色,M"), 2), one(f.bagSKU(t), 1)}
		var first *Order
		for i := range len(lines) {
			rotated := append(append([]ItemInput{}, lines[i:]...), lines[:i]...)
			if i%2 == 1 {
				for l, r := 0, len(rotated)-1; l < r; l, r = l+1, r-1 {
					rotated[l], rotated[r] = rotated[r], rotated[l]
				}
			}
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: rotated, AddressID: &to, Remark: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = o
				// 5 T-shirts: 10.00 + 2 × 3.00; 1,180 g: 8.00 + 2.00.
				if o.ShippingFee != m("26.00") {
					t.Fatalf("fee %s, want 26.00", o.ShippingFee)
				}
				continue
			}
			if o.ShippingFee != first.ShippingFee || o.Amount != first.Amount {
				t.Errorf("lines %v: fee %s amount %s, the first order's %s %s", rotated, o.ShippingFee, o.Amount, first.ShippingFee, first.Amount)
			}
		}
	})
}

// A template put on a goods whose SKU the group path keeps selling from
// its memory of the SKU (lastRead, MySQL and PostgreSQL): the template is
// not a term the batch's CAS checks, and orders without an address are
// refused once the memory is older than lastRead.maxAge.
func TestTemplateReachesTheGroupPathsMemory(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db, path{"group", true}))
		memory := f.svc.batcher.(*serverBatcher).lastRead
		memory.maxAge = 300 * time.Millisecond
		blackL := f.skuID(t, "黑色,L")
		f.setStock(t, blackL, 1_000_000) // no refusal for stock, which would read the SKU again
		place := func() error {
			_, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 1)}, IdempotencyKey: newKey()})
			return err
		}
		for range 3 { // the batches remember the SKU
			if err := place(); err != nil {
				t.Fatal(err)
			}
		}
		f.underTemplate(t, f.ids["DEMO-TSHIRT"], f.newTemplate(t, enums.ChargeByPiece,
			shipping.Rule{RegionCodes: []string{"*"}, FirstUnits: 1, FirstFee: m("10.00"), NextUnits: 1, NextFee: m("1.00")}))
		set := time.Now()
		for placed := 0; ; placed++ {
			err := place()
			if errors.Is(err, shipping.ErrAddressRequired) {
				t.Logf("%d orders placed from memory in the %v after the template", placed, time.Since(set).Round(time.Millisecond))
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(set) > 5*time.Second {
				t.Fatalf("%d orders placed without an address %v after the goods got a template", placed, time.Since(set))
			}
		}
	})
}
