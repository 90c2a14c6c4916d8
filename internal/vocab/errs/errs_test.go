package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"storefront/internal/vocab/errs"
)

var errOutOfStock = errs.New(errs.Conflict, "out of stock")

func TestIs(t *testing.T) {
	other := errs.New(errs.Conflict, "out of stock") // same words, another error
	for _, tc := range []struct {
		name string
		err  error
		is   []error // errors.Is(err, each) holds
		not  []error // errors.Is(err, each) does not
		msg  string
	}{
		{"precise", errOutOfStock, []error{errOutOfStock, errs.Conflict}, []error{other, errs.InvalidInput, errs.NotFound}, "out of stock"},
		{"wrapped with %w", fmt.Errorf("%w: SKU %d", errOutOfStock, 7), []error{errOutOfStock, errs.Conflict}, []error{other, errs.InvalidInput}, "out of stock: SKU 7"},
		{"wrapped twice", fmt.Errorf("placing: %w", fmt.Errorf("%w: SKU %d", errOutOfStock, 7)), []error{errOutOfStock, errs.Conflict}, nil, "placing: out of stock: SKU 7"},
		{"category alone", fmt.Errorf("%w: goods %d", errs.NotFound, 3), []error{errs.NotFound}, []error{errs.InvalidInput, errOutOfStock}, "not found: goods 3"},
		{"two categories", fmt.Errorf("%w: %w", errs.InvalidInput, errOutOfStock), []error{errs.InvalidInput, errOutOfStock, errs.Conflict}, []error{errs.NotFound}, "invalid input: out of stock"},
		{"joined", errors.Join(errOutOfStock, errors.New("driver said no")), []error{errOutOfStock, errs.Conflict}, nil, "out of stock\ndriver said no"},
		{"shared precise", fmt.Errorf("%w: SKU 1 is at version 3, not 2", errs.VersionConflict), []error{errs.VersionConflict, errs.Conflict}, []error{errOutOfStock}, "version conflict: reload and retry: SKU 1 is at version 3, not 2"},
		{"unrelated", errors.New("out of stock"), nil, []error{errOutOfStock, errs.Conflict}, "out of stock"},
	} {
		for _, target := range tc.is {
			if !errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%q, %q) = false, want true", tc.name, tc.err, target)
			}
		}
		for _, target := range tc.not {
			if errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%q, %q) = true, want false", tc.name, tc.err, target)
			}
		}
		if got := tc.err.Error(); got != tc.msg {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, tc.msg)
		}
	}
}

func TestCategoriesAreDistinct(t *testing.T) {
	cats := []error{errs.NotFound, errs.InvalidInput, errs.Conflict, errs.Unavailable, errs.Unauthenticated, errs.Forbidden, errs.RateLimited}
	for i, a := range cats {
		for j, b := range cats {
			if got := errors.Is(a, b); got != (i == j) {
				t.Errorf("errors.Is(%q, %q) = %v", a, b, got)
			}
		}
	}
}

func TestNewRefusesANonCategory(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("errs.New(errOutOfStock, …) did not panic: a precise error must wrap a category")
		}
	}()
	_ = errs.New(errOutOfStock, "nested")
}
