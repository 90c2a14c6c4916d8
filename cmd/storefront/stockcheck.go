package main

import (
	"context"
	"log/slog"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/metrics"
)

// stockCheck runs one stock check (seed 003, 7.4): it sets the ledger
// difference, lock difference and negative-stock gauges and logs an error
// line per SKU that differs. It lives here, not in metrics, so that metrics
// imports no domain. It corrects nothing: a person books a stocktake.
func stockCheck(ctx context.Context, inv *inventory.Service, m *metrics.Metrics, limit int) (int, error) {
	diffs, err := inv.Reconcile(ctx, limit)
	if err != nil {
		m.ReconcileErrors.Inc()
		return 0, err
	}
	negative, err := inv.NegativeSKUs(ctx)
	if err != nil {
		m.ReconcileErrors.Inc()
		return 0, err
	}
	ledger, locks := 0, 0
	for _, d := range diffs {
		if d.Diff != 0 {
			ledger++
			slog.ErrorContext(ctx, "stock differs from the ledger",
				"item_id", d.ItemID, "goods_id", d.GoodsID, "stock", d.Stock, "ledger_sum", d.LedgerSum, "diff", d.Diff)
		}
		if d.LockDrift() {
			locks++
			slog.ErrorContext(ctx, "locked stock differs from the unpaid lock-mode lines",
				"item_id", d.ItemID, "goods_id", d.GoodsID, "stock", d.Stock, "locked", d.LockedStock, "locked_by_orders", d.LockedByOrders, "diff", d.LockDiff)
		}
	}
	if negative > 0 {
		slog.ErrorContext(ctx, "SKUs with negative stock", "count", negative)
	}
	m.LedgerDiffSKUs.Set(float64(ledger))
	m.LockDiffSKUs.Set(float64(locks))
	m.NegativeSKUs.Set(float64(negative))
	m.ReconcileLast.Set(float64(time.Now().Unix()))
	return len(diffs), nil
}
