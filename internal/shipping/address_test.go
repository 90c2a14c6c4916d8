package shipping

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

var home = OrderAddress{Name: "张三", Phone: "+8613800138000", RegionCode: "310104", Province: "上海市", City: "上海市",
	District: "徐汇区", Line: "漕溪北路 88 号", PostalCode: "200030"}

// Thirty adds at once, each asking to be the default, into one book of at
// most twenty: twenty are added, the others refused, and exactly one
// address is the default, on every backend.
func TestAddressBookUnderConcurrency(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			added   int
			refused int
		)
		for i := range 30 {
			wg.Go(func() {
				a := home
				a.Line = fmt.Sprint("路 ", i)
				_, err := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: a, IsDefault: true})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					added++
				case errors.Is(err, errs.InvalidInput):
					refused++
				default:
					t.Errorf("add %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		book, err := s.Addresses(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		defaults := 0
		for _, a := range book {
			if a.IsDefault {
				defaults++
			}
		}
		if added != MaxAddresses || refused != 10 || len(book) != MaxAddresses || defaults != 1 || !book[0].IsDefault {
			t.Errorf("%d added, %d refused; the book holds %d with %d defaults (first default: %v)", added, refused, len(book), defaults, book[0].IsDefault)
		}
		// Removing them all at once, the default among them: each goes once,
		// and while any is left one of them is the default.
		for _, a := range book {
			wg.Go(func() {
				if err := s.RemoveAddress(ctx, "u1", a.ID); err != nil {
					t.Errorf("remove %d: %v", a.ID, err)
				}
				left, err := s.Addresses(ctx, "u1")
				if err != nil {
					t.Error(err)
					return
				}
				if len(left) > 0 && !left[0].IsDefault {
					t.Errorf("%d left without a default", len(left))
				}
			})
		}
		wg.Wait()
		if left, _ := s.Addresses(ctx, "u1"); len(left) != 0 {
			t.Errorf("%d left", len(left))
		}
		if _, err := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: home}); err != nil {
			t.Errorf("after emptying the book: %v", err)
		}
	})
}

// The book's rules: the first address is the default, isDefault moves it,
// removing the default makes the newest the default, someone else's ids are
// NOT_FOUND, and every field is checked.
func TestAddressBook(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		a1, err := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: home})
		if err != nil || !a1.IsDefault {
			t.Fatalf("first address: %+v, %v", a1, err)
		}
		a2, err := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: home})
		if err != nil || a2.IsDefault {
			t.Fatalf("second address: %+v, %v", a2, err)
		}
		a3, _ := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: home})
		moved := home
		moved.City, moved.RegionCode = "北京市", "110101"
		if got, err := s.UpdateAddress(ctx, "u1", a2.ID, AddressInput{OrderAddress: moved, IsDefault: true}); err != nil || !got.IsDefault || got.RegionCode != "110101" {
			t.Errorf("update to default: %+v, %v", got, err)
		}
		if got, err := s.UpdateAddress(ctx, "u1", a2.ID, AddressInput{OrderAddress: moved}); err != nil || !got.IsDefault {
			t.Errorf("isDefault false on the default keeps it: %+v, %v", got, err)
		}
		if err := s.RemoveAddress(ctx, "u1", a2.ID); err != nil {
			t.Fatal(err)
		}
		book, _ := s.Addresses(ctx, "u1")
		if len(book) != 2 || book[0].ID != a3.ID || !book[0].IsDefault || book[1].ID != a1.ID {
			t.Errorf("after removing the default: %+v, want the newest (%d) the default", book, a3.ID)
		}
		if _, err := s.UpdateAddress(ctx, "u2", a1.ID, AddressInput{OrderAddress: home}); !errors.Is(err, errs.NotFound) {
			t.Errorf("someone else's update: %v", err)
		}
		if err := s.RemoveAddress(ctx, "u2", a1.ID); !errors.Is(err, errs.NotFound) {
			t.Errorf("someone else's removal: %v", err)
		}
		if b, _ := s.Addresses(ctx, "u2"); len(b) != 0 {
			t.Errorf("u2's book: %+v", b)
		}
		for _, tc := range []struct {
			name string
			edit func(*OrderAddress)
		}{
			{"no name", func(a *OrderAddress) { a.Name = " " }},
			{"a long name", func(a *OrderAddress) { a.Name = string(make([]rune, 65)) }},
			{"letters in the phone", func(a *OrderAddress) { a.Phone = "138-0013" }},
			{"a short phone", func(a *OrderAddress) { a.Phone = "12" }},
			{"a + inside the phone", func(a *OrderAddress) { a.Phone = "138+00138000" }},
			{"a 4-digit region", func(a *OrderAddress) { a.RegionCode = "3101" }},
			{"a region of letters", func(a *OrderAddress) { a.RegionCode = "31010a" }},
			{"region 00", func(a *OrderAddress) { a.RegionCode = "000104" }},
			{"a province that is none", func(a *OrderAddress) { a.RegionCode = "990000" }},
			{"all nines", func(a *OrderAddress) { a.RegionCode = "999999" }},
			{"a district Shanghai has not", func(a *OrderAddress) { a.RegionCode = "310199" }},
			{"a province with districts", func(a *OrderAddress) { a.RegionCode = "310000" }},
			{"a city with districts", func(a *OrderAddress) { a.RegionCode = "650100" }},
			{"no line", func(a *OrderAddress) { a.Line = "" }},
			{"a line of 121", func(a *OrderAddress) { a.Line = string(make([]rune, 121)) }},
			{"a bad postal code", func(a *OrderAddress) { a.PostalCode = "#1" }},
		} {
			a := home
			tc.edit(&a)
			if _, err := s.AddAddress(ctx, "u3", AddressInput{OrderAddress: a}); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: %v, want INVALID_INPUT", tc.name, err)
			}
		}
		if b, _ := s.Addresses(ctx, "u3"); len(b) != 0 {
			t.Errorf("refused addresses were added: %+v", b)
		}
	})
}
