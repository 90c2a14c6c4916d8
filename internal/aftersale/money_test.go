package aftersale_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"storefront/ent/moneyentry"
	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// notify sends the mock provider's signed notification of payment pid of
// order o in status, under event id ev.
func (f *fixture) notify(t *testing.T, o *checkout.Order, ev, pid, status string) {
	t.Helper()
	n := mock.Notification{EventID: ev, PaymentID: pid, OrderSn: o.OrderSn, Amount: o.Amount.String(),
		Currency: "CNY", MerchantID: "m-1", Status: status, Timestamp: time.Now().Unix()}
	body, _ := json.Marshal(n)
	if _, err := f.pay.Notify(ctx, "mock", mock.Header(mock.Sign(secret, body)), body); err != nil {
		t.Fatalf("%s %s of %s: %v", status, pid, o.OrderSn, err)
	}
}

// kinds is order o's money log as kind and amount, oldest first.
func (f *fixture) kinds(t *testing.T, o *checkout.Order) []string {
	t.Helper()
	log, err := f.pay.MoneyLog(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range log {
		out = append(out, string(e.Kind)+" "+e.Amount.String())
	}
	return out
}

// Every way money moves books it once on the money ledger, whoever repeats
// it, and reconcile finds the books balanced: a payment (CHARGE), a second
// payment of a paid order (EXTRA, the order flagged), an after-sale's
// refund and refundOrder's of the rest (two REFUNDs), and a whole payment
// refunded at the provider, notified twice (one REFUND). A tampered order
// then shows as a difference of the rule it breaks.
func TestMoneyLedgerBooksEveryMovementOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		paid := f.paid(t, "buyer-1", 2, item)
		unit := paid.Lines[0].UnitPrice

		extra := f.paid(t, "buyer-1", 1, item)
		f.notify(t, extra, "ev-extra", "pay-extra-"+extra.OrderSn, "SUCCESS")
		f.notify(t, extra, "ev-extra-again", "pay-extra-"+extra.OrderSn, "SUCCESS")

		refunded := f.paid(t, "buyer-1", 3, item)
		a := f.request(t, refunded, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 1})
		if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
			t.Fatal(err)
		}
		if _, err := f.as.RefundOrder(ctx, admin, refunded.OrderSn, "the rest"); err != nil {
			t.Fatal(err)
		}

		outside := f.paid(t, "buyer-1", 1, item)
		f.notify(t, outside, "ev-out-1", "pay-"+outside.OrderSn, "REFUNDED")
		f.notify(t, outside, "ev-out-2", "pay-"+outside.OrderSn, "REFUNDED")

		for _, c := range []struct {
			o    *checkout.Order
			want []string
		}{
			{paid, []string{"CHARGE " + (2 * unit).String()}},
			{extra, []string{"CHARGE " + unit.String(), "EXTRA " + unit.String()}},
			{refunded, []string{"CHARGE " + (3 * unit).String(), "REFUND " + (-unit).String(), "REFUND " + (-2 * unit).String()}},
			{outside, []string{"CHARGE " + unit.String(), "REFUND " + (-unit).String()}},
		} {
			if got := f.kinds(t, c.o); !slices.Equal(got, c.want) {
				t.Errorf("order %s: money log %v, want %v", c.o.OrderSn, got, c.want)
			}
		}
		if o := f.order(t, extra.OrderSn); !o.NeedsReview {
			t.Error("the order paid twice is not flagged")
		}
		f.clean(t)

		// Tampered books: each shows as its rule.
		tamper := map[string]string{
			"balance":                          "UPDATE orders SET refunded_amount = refunded_amount + 1 WHERE id = " + itoa(paid.ID),
			"charge":                           "UPDATE payment SET amount = amount + 1 WHERE order_id = " + itoa(outside.ID),
			"refund above what the units paid": "UPDATE order_line SET after_sale_amount = after_sale_amount + 1 WHERE order_id = " + itoa(refunded.ID),
		}
		for rule, q := range tamper {
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
			diffs, err := f.pay.ReconcileMoney(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(diffs, func(d payDiff) bool { return d.Check == rule && !d.Review }) {
				t.Errorf("after %q reconcile reports %v; want a difference of rule %q", q, diffs, rule)
			}
		}
		if n := db.Client.MoneyEntry.Query().Where(moneyentry.KindEQ(enums.MoneyRefund)).CountX(ctx); n != 3 {
			t.Errorf("%d REFUND entries, want 3", n)
		}
	})
}

// With refundOrder's guards taken away (its bug before them), a shipment
// and then a whole refund refund shipped units: reconcile reports the
// whole refund of shipped units, which it did not before the ledger.
func TestReconcileCatchesAWholeRefundOfShippedUnits(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		o := f.shippable(t, item, 3, "unguarded")
		f.shipOne(t, o, item, "SF-1")
		if _, err := f.as.RefundOrder(ctx, admin, o.OrderSn, "guarded"); err == nil {
			t.Fatal("the guarded whole refund of a shipped order was not refused")
		}
		defer as.UnguardWholeRefund()()
		if _, err := f.as.RefundOrder(ctx, admin, o.OrderSn, "unguarded"); err != nil {
			t.Fatal(err)
		}
		diffs, err := f.pay.ReconcileMoney(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(diffs, func(d payDiff) bool { return d.Check == "whole refund of shipped units" && d.OrderSn == o.OrderSn }) {
			t.Errorf("reconcile reports %v; want the whole refund of shipped units of %s", diffs, o.OrderSn)
		}
	})
}

type payDiff = payments.MoneyDiff

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
