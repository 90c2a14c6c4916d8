package listing_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// A cursor is valid only for the sort that made it, its direction included:
// one from an ascending page reused on the descending listing of the same
// field (or the other way round) is INVALID_INPUT, never a page that skips
// or repeats goods (issue 25, section 7).
func TestCursorOfTheOtherDirectionIsRefused(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		if _, err := demo.Seed(ctx, cat); err != nil {
			t.Fatal(err)
		}
		for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
			for _, desc := range []bool{false, true} {
				p, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: desc, First: 1})
				if err != nil || len(p.Cursors) != 1 || !p.HasNextPage {
					t.Fatalf("first page by %s desc=%v: %+v, %v; want one goods and more", sort, desc, p, err)
				}
				after := p.Cursors[0]
				if _, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: desc, First: 1, After: after}); err != nil {
					t.Fatalf("the cursor by %s desc=%v on its own listing: %v", sort, desc, err)
				}
				_, err = cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: !desc, First: 1, After: after})
				if !errors.Is(err, errs.InvalidInput) {
					t.Errorf("a cursor by %s desc=%v reused with desc=%v: %v, want INVALID_INPUT", sort, desc, !desc, err)
				}
			}
		}
	})
}

// A listing cursor decodes only as encodeCursor spelled it: the same id and
// sort value written `01`, `+5`, or a time in another zone is INVALID_INPUT,
// so one page has one cursor and one response-cache entry (issue 25 review).
func TestCursorOnlyInItsCanonicalSpelling(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		if _, err := demo.Seed(ctx, cat); err != nil {
			t.Fatal(err)
		}
		for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
			p, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, First: 1})
			if err != nil || len(p.Cursors) != 1 {
				t.Fatalf("first page by %s: %+v, %v", sort, p, err)
			}
			raw, err := base64.RawURLEncoding.DecodeString(p.Cursors[0])
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.SplitN(string(raw), ":", 4) // kind:fingerprint:id:value
			if len(parts) != 4 {
				t.Fatalf("cursor %q", raw)
			}
			respell := func(id, value string) string {
				return base64.RawURLEncoding.EncodeToString([]byte(parts[0] + ":" + parts[1] + ":" + id + ":" + value))
			}
			if respell(parts[2], parts[3]) != p.Cursors[0] {
				t.Fatalf("the test's spelling of %q differs from the listing's", raw)
			}
			bad := []string{respell("0"+parts[2], parts[3]), respell("+"+parts[2], parts[3])}
			switch sort {
			case listing.ByCreated:
				at, err := time.Parse(time.RFC3339Nano, parts[3])
				if err != nil {
					t.Fatal(err)
				}
				bad = append(bad, respell(parts[2], at.In(time.FixedZone("", 8*3600)).Format(time.RFC3339Nano)))
			case listing.ByPrice, listing.BySales, listing.ByID:
				bad = append(bad, respell(parts[2], "0"+parts[3]), respell(parts[2], "+"+parts[3]))
			}
			for _, c := range bad {
				_, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, First: 1, After: c})
				if !errors.Is(err, errs.InvalidInput) {
					t.Errorf("by %s, a respelled cursor: %v, want INVALID_INPUT", sort, err)
				}
			}
		}
	})
}
