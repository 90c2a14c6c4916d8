package checkout

import (
	"context"
	"encoding/json"
	"testing"

	"storefront/ent"
	"storefront/ent/orderline"
	"storefront/internal/platform/store"
	"storefront/internal/pricing"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// pointsOff is a kind of adjustment defined here only, the way the next
// kinds will be: 1.50 of points off every order, its source the buyer's
// points account 7. Nothing outside this definition knows it.
type pointsOff struct{}

func (pointsOff) Read(context.Context, *ent.Client, []*PlaceInput) (Pricer, error) {
	return func(*Order, *PlaceInput) (*pricing.Adjustment, error) {
		return &pricing.Adjustment{Kind: enums.AdjustPoints, SourceID: 7, Label: "points", Amount: -150}, nil
	}, nil
}

// A kind added as its definition alone prices the order (on the plain path
// and in a batch), is stored as rows and read back, is carried by the
// order's event, and is taken out of what a refund of a line returns.
func TestAnAdjustmentKindIsItsDefinition(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		cfg := f.svc.cfg
		cfg.Adjusters = []Adjuster{pointsOff{}}
		svc := New(db, cfg)
		svc.now, svc.loneOnPlain = f.svc.now, f.svc.loneOnPlain
		id := f.skuID(t, "黑色,L")
		o, err := svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(id, 3)}, IdempotencyKey: "points"})
		if err != nil {
			t.Fatal(err)
		}
		unit := o.Lines[0].UnitPrice
		if o.Subtotal != 3*unit || o.Amount != 3*unit-150 || o.Discount != 150 {
			t.Fatalf("subtotal %s amount %s discount %s, want %s, %s, 1.50", o.Subtotal, o.Amount, o.Discount, 3*unit, 3*unit-150)
		}

		got, err := svc.Order(ctx, "u1", false, o.OrderSn)
		if err != nil || got == nil {
			t.Fatalf("reading the order: %v", err)
		}
		if len(got.Adjustments) != 1 {
			t.Fatalf("adjustments read back: %+v", got.Adjustments)
		}
		a := got.Adjustments[0]
		if a.Kind != enums.AdjustPoints || a.SourceID != 7 || a.Label != "points" || a.Amount != -150 ||
			len(a.Lines) != 1 || a.Lines[0] != (AdjustmentLine{ItemID: id, Amount: -150}) {
			t.Fatalf("adjustment read back: %+v", a)
		}
		if got.Amount != got.Subtotal+a.Amount || got.Lines[0].Discount != 150 {
			t.Fatalf("read back: amount %s subtotal %s line discount %s", got.Amount, got.Subtotal, got.Lines[0].Discount)
		}

		var payload string
		if err := db.SQL.QueryRow("SELECT payload FROM outbox WHERE type = ?", EventOrderPlaced).Scan(&payload); err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Adjustments []struct {
				Kind, SourceID, Amount string
			} `json:"adjustments"`
		}
		// A batch's row holds a list of events; the plain path's one event.
		var evs []json.RawMessage
		if json.Unmarshal([]byte(payload), &evs) != nil {
			evs = []json.RawMessage{json.RawMessage(payload)}
		}
		if err := json.Unmarshal(evs[0], &ev); err != nil {
			t.Fatalf("payload %s: %v", payload, err)
		}
		if len(ev.Adjustments) != 1 || ev.Adjustments[0].Kind != "POINTS" || ev.Adjustments[0].SourceID != "7" || ev.Adjustments[0].Amount != "-1.50" {
			t.Fatalf("OrderPlaced carries %s", payload)
		}

		// One unit of three refunds a third of what the line paid; the
		// last two what is left of it.
		lineID, err := db.Client.OrderLine.Query().Where(orderline.OrderID(got.ID)).OnlyID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var first, rest LineHold
		err = store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			if first, err = HoldLineTx(ctx, tx, lineID, 1, HoldRefund); err != nil {
				return err
			}
			rest, err = HoldLineTx(ctx, tx, lineID, 2, HoldRefund)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		paid := 3*unit - 150
		if first.Amount != paid/3 || first.Amount+rest.Amount != paid {
			t.Fatalf("refunds of 1 and 2 units: %s and %s, want %s and the rest of %s", first.Amount, rest.Amount, money.Money(paid/3), paid)
		}
	})
}
