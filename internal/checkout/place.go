package checkout

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/internal/guard"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/vocab/enums"
)

// fallbackPrefix marks keys derived from the input when the client sent none.
const fallbackPrefix = "auto:"

// Place validates in, then places the order in one short transaction. With a
// key already finished for the same input it returns that order again.
func (s *Service) Place(ctx context.Context, in PlaceInput) (*Order, error) {
	if err := s.check(in); err != nil {
		return nil, err
	}
	t := &ticket{in: in, hash: requestHash(in), key: in.IdempotencyKey, keep: s.cfg.Retention}
	if s.cfg.Tracing.On() {
		t.span = trace.SpanContextFromContext(ctx)
	}
	if t.key == "" {
		t.key, t.keep = fallbackPrefix+t.hash, s.cfg.FallbackWindow
	}
	if src, ok := s.groupable(in); ok {
		t.item, t.pool = src.item, src.pool
		return s.placeGrouped(ctx, t)
	}
	return s.placePlain(ctx, t)
}

// placePlain is the plain path: claim the key in its own statement, resolve
// the SKUs, place the order in its own transaction.
func (s *Service) placePlain(ctx context.Context, t *ticket) (*Order, error) {
	c, replay, err := s.claimKey(ctx, t.in.UserID, t.key, t.hash, t.keep)
	if err != nil {
		return nil, err
	}
	if replay != "" {
		return s.replay(ctx, replay)
	}
	o, err := s.place(ctx, t.in, c)
	// IN_PROGRESS here means our lease was taken over: the key is no longer
	// ours to release.
	if err != nil && !errors.Is(err, ErrIdempotencyInProgress) {
		s.release(ctx, c)
	}
	return o, err
}

// staleReruns bounds how often place reads again after its take found a SKU
// or goods no longer as resolved (inventory.Short); past it the order
// answers UNAVAILABLE.
const staleReruns = 3

func (s *Service) place(ctx context.Context, in PlaceInput, c *claim) (*Order, error) {
	var (
		short *inventory.Short
		goods []int64 // of the lines read, for the last round's lock
		to    = &shipTo{user: in.UserID, addressID: in.AddressID}
	)
	for round := range staleReruns + 1 {
		// decide reads the lines and checks them against the take that
		// did not hold; on q, a client or the last round's transaction.
		decide := func(ctx context.Context, q querier) (*Order, error) {
			lines, err := s.resolve(ctx, q, in.Items, to)
			if err != nil {
				return nil, err
			}
			if short != nil {
				// The take did not hold on this SKU; a fresh read that still shows
				// it sold on the same terms and short of stock is OUT_OF_STOCK.
				if l := lineOf(lines, short.Sale.ItemID); l != nil && l.sellsOn(short.Sale.Terms) && l.stock < l.Quantity {
					return nil, outOfStock(l)
				}
			}
			goods = goods[:0]
			for _, l := range lines {
				goods = append(goods, l.GoodsID)
			}
			// The hook runs before the order takes its time: the CAS checks a
			// pool's window at that time (tests stop a pool here). Never inside
			// the last round's transaction, where another writer would wait.
			if round < staleReruns {
				if err := s.at("resolved"); err != nil {
					return nil, err
				}
			}
			o := s.newOrder(in, lines)
			to.stamp(o)
			pricers, err := s.readPricers(ctx, s.db.Client, []*PlaceInput{&in})
			if err != nil {
				return nil, err
			}
			if err := price(o, &in, pricers); err != nil {
				return nil, err
			}
			return o, nil
		}
		var (
			o   *Order
			err error
		)
		if round < staleReruns {
			if o, err = decide(ctx, s.db.Client); err != nil {
				return nil, err
			}
			err = s.placeTx(ctx, c, func(context.Context, *ent.Tx) (*Order, error) { return o, nil })
		} else {
			// The terms kept changing between the read and the take (an
			// admin editing as fast as orders come): the last round reads
			// them inside its transaction, under the shared goods lock that
			// every catalog edit of those goods waits for (inventory's lock
			// order), so its take cannot find them changed again.
			err = s.placeTx(ctx, c, func(ctx context.Context, tx *ent.Tx) (*Order, error) {
				if err := inventory.LockGoods(ctx, tx, goods...); err != nil {
					return nil, err
				}
				var err error
				o, err = decide(ctx, tx)
				return o, err
			})
		}
		if !errors.As(err, &short) {
			if err != nil {
				return nil, err
			}
			return o, nil
		}
	}
	return nil, fmt.Errorf("%w: SKU %d kept changing while the order was placed; retry", store.ErrUnavailable, short.Sale.ItemID)
}

// newOrder is the order of in's resolved lines, not yet priced (price).
func (s *Service) newOrder(in PlaceInput, lines []*line) *Order {
	now := s.now()
	o := &Order{
		OrderSn: newOrderSn(now), UserID: in.UserID, Status: enums.OrderUnpaid,
		Currency: s.cfg.Currency, Remark: in.Remark,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.OrderTTL),
	}
	for _, l := range lines {
		l.counted = l.limit != nil
		o.Lines = append(o.Lines, &l.OrderLine)
	}
	if s.plant != nil {
		s.plant(o)
	}
	return o
}

// placeTx places one order in its own transaction: the plain path, and a
// batch of one on the group path. Everything that needs no SKU row lock goes
// first: inventory.Take locks the rows with its CAS and holds them to
// COMMIT, and on a hot SKU throughput is bounded by how long that is.
//
// decided gives the order to place, inside the transaction (a retry of the
// transaction asks again).
func (s *Service) placeTx(ctx context.Context, c *claim, decided func(context.Context, *ent.Tx) (*Order, error)) error {
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		o, err := decided(ctx, tx)
		if err != nil {
			return err
		}
		sales := make([]inventory.Sale, len(o.Lines))
		for i, l := range o.Lines {
			sales[i] = sale(o, l)
		}
		// The goods lock first (inventory's lock order), then the inserts.
		if err := inventory.CheckGoods(ctx, tx, sales); err != nil {
			return err
		}
		id, err := s.db.InsertID(ctx, tx, store.NewInsert(order.Table).Row(o.write))
		if err != nil {
			return fmt.Errorf("inserting order: %w", err)
		}
		o.ID = id
		lines := store.NewInsert(orderline.Table)
		for _, l := range o.Lines {
			lines.Row(func(v store.Values) { writeLine(v, o, l) })
		}
		if err := store.Exec(ctx, tx, lines); err != nil {
			return fmt.Errorf("inserting order lines: %w", err)
		}
		if adjs := adjustmentRows(o); adjs != nil {
			if err := store.Exec(ctx, tx, adjs); err != nil {
				return fmt.Errorf("inserting order adjustments: %w", err)
			}
		}
		if err := emit(ctx, tx, EventOrderPlaced, o, "", o.CreatedAt); err != nil {
			return err
		}
		if err := finish(ctx, tx, c, o.OrderSn); err != nil {
			return err
		}
		if err := guard.TakeRows(ctx, tx, couponClaims(o.CreatedAt, o)); err != nil {
			return err
		}
		return inventory.TakeChecked(ctx, tx, sales, purchaseCounters(o)...)
	})
	var short *inventory.Short
	if errors.As(err, &short) {
		return err
	}
	var limit *guard.CounterLimit
	if errors.As(err, &limit) && limit.Kind == promo.Purchases {
		return s.purchaseLimitError(ctx, limit)
	}
	return store.Classify(err)
}

func lineOf(lines []*line, id int64) *line {
	for _, l := range lines {
		if l.ItemID == id {
			return l
		}
	}
	return nil
}

func outOfStock(l *line) error {
	return fmt.Errorf("%w: SKU %d (%s %s) has fewer than %d left", ErrOutOfStock, l.ItemID, l.GoodsName, l.SpecValueStr, l.Quantity)
}

// replay answers a request whose key already finished with that order.
func (s *Service) replay(ctx context.Context, orderSn string) (*Order, error) {
	if s.cfg.OnReplay != nil {
		s.cfg.OnReplay()
	}
	return s.load(ctx, orderSn)
}
