package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// reconcileListing prints every listing row that differs from what the
// goods, sku and category rows give, and returns how many there are.
func reconcileListing(ctx context.Context, db *store.DB, limit int) (int, error) {
	diffs, err := listing.Reconcile(ctx, db.Client, limit)
	if err != nil {
		return 0, err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GOODS\tSCOPE\tCOLUMN\tWANT\tHAVE")
	for _, d := range diffs {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\n", d.GoodsID, d.Scope, d.Column, d.Want, d.Got)
	}
	w.Flush()
	fmt.Printf("%d listing row value(s) differ from the goods and their SKUs\n", len(diffs))
	return len(diffs), nil
}
