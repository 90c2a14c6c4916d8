package checkout

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// postgresWriter is the batch's writer on PostgreSQL (serverBatcher does
// the rest): the engine (inventory.PostgresBatch) writes the stock and the
// transaction around it as one simple-protocol query; the writer adds the
// orders' rows, which say their ids as they are inserted.
type postgresWriter struct {
	commitHooks
}

func (b *postgresWriter) engine() inventory.BatchEngine { return inventory.PostgresBatch{} }

func (b *postgresWriter) write(ctx context.Context, s *Service, c *store.Conn, batch []*ticket, d decision, now time.Time, begin bool) error {
	w, placed := b.batch(batch, d, now, begin)
	w.Rows = func(r *inventory.Rows) error {
		return s.writeOrders(r.Text, batch, d.won, placed, now, " RETURNING id, order_sn", linesEach)
	}
	written, err := b.engine().Write(ctx, c, w)
	if err := writeErr(err, batch, d); err != nil {
		return err
	}
	// The committed orders' ids came back before COMMIT (the one INSERT of
	// the query that returns rows).
	ids := make(map[string]int64, len(placed))
	for _, r := range written.Results {
		if !strings.HasPrefix(r.Tag, "INSERT") || len(r.Rows) == 0 {
			continue
		}
		for _, row := range r.Rows {
			id, err := strconv.ParseInt(row[0], 10, 64)
			if err != nil {
				return fmt.Errorf("%w: the batch committed, reading its order ids failed: %w", store.ErrCommitUnknown, err)
			}
			ids[row[1]] = id
		}
	}
	for _, o := range placed {
		if o.ID = ids[o.OrderSn]; o.ID == 0 {
			return fmt.Errorf("%w: the batch committed, order %s came back without its id", store.ErrCommitUnknown, o.OrderSn)
		}
	}
	return nil
}
