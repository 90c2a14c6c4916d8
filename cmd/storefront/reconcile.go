package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/payments"
	"storefront/internal/promo"
)

// reconcileCmd is `storefront reconcile`: it prints every SKU whose stock differs from its ledger sum, every
// fault of the category tree (a loop, a tree too deep) and every listing
// row that differs from its goods, every order whose money differs from
// the money ledger, and exits non-zero when there is one.
// It corrects nothing: a person books a stocktake, or moves a category.
type reconcileCmd struct {
	Database dbFlags `embed:"" group:"database"`
	Limit    int     `name:"limit" default:"1000" help:"list at most this many SKUs"`
}

func (c *reconcileCmd) Run(ctx context.Context) error {
	db, err := c.Database.open(ctx, c.Database.DB, false, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	inv := inventory.New(db)
	diffs, err := inv.Reconcile(ctx, c.Limit)
	if err != nil {
		return err
	}
	negative, err := inv.NegativeSKUs(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ITEM\tGOODS\tSTOCK\tLEDGER SUM\tDIFF\tLOCKED\tLOCKED BY ORDERS\tLOCK DIFF")
	locks := 0
	for _, d := range diffs {
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%+d\t%d\t%d\t%+d\n", d.ItemID, d.GoodsID, d.Stock, d.LedgerSum, d.Diff, d.LockedStock, d.LockedByOrders, d.LockDiff)
		if d.LockDrift() {
			locks++
		}
	}
	w.Flush()
	fmt.Printf("%d SKU(s) differ from the ledger or their locks (%d of them in the lock); %d SKU(s) have negative stock\n", len(diffs), locks, negative)
	pools, err := inv.ReconcilePools(ctx, true)
	if err != nil {
		return err
	}
	w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "POOL\tITEM\tSTOCK\tLEDGER SUM\tMOVED OUT\tMOVED BACK\tSOLD OPEN\tLOCKED\tLOCKED BY ORDERS\tBALANCED")
	unbalanced := 0
	for _, p := range pools {
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\n", p.PoolID, p.ItemID, p.Stock, p.LedgerSum, p.MovedOut, p.MovedBack, p.SoldOpen,
			p.LockedStock, p.LockedByOrders, p.Balanced())
		if !p.Balanced() {
			unbalanced++
		}
	}
	w.Flush()
	fmt.Printf("%d stock pool(s), %d of them do not balance (stock = ledger sum, moved out - moved back = stock + sold open, locked = locked by orders)\n", len(pools), unbalanced)
	faults, err := catalog.CheckTree(ctx, db.Client)
	if err != nil {
		return err
	}
	for _, f := range faults {
		fmt.Printf("category tree: %s\n", f)
	}
	fmt.Printf("%d category tree fault(s) (loops, categories deeper than %d levels, parents with more than %d children)\n",
		len(faults), listing.MaxDepth, catalog.MaxChildren)
	listed, err := reconcileListing(ctx, db, c.Limit)
	if err != nil {
		return err
	}
	promos, err := promo.New(db).Reconcile(ctx)
	if err != nil {
		return err
	}
	for _, d := range promos {
		fmt.Println(d)
	}
	fmt.Printf("%d coupon or purchase difference(s) (counters against their rows, coupons against their orders)\n", len(promos))
	listed += len(promos)
	money, err := payments.New(db, payments.Config{}).ReconcileMoney(ctx)
	if err != nil {
		return err
	}
	review := 0
	for _, d := range money {
		fmt.Println(d)
		if d.Review {
			review++
		}
	}
	fmt.Printf("%d order(s) whose money differs from the money ledger (%d more flagged for review: docs/operations.md, \"A money difference\")\n",
		len(money)-review, review)
	listed += len(money) - review
	if len(diffs) > 0 || negative > 0 || unbalanced > 0 || len(faults) > 0 || listed > 0 {
		return fmt.Errorf("reconciliation found %d difference(s), %d negative SKU(s), %d unbalanced pool(s), %d category tree fault(s) and %d listing, promotion or money difference(s)",
			len(diffs), negative, unbalanced, len(faults), listed)
	}
	return nil
}
