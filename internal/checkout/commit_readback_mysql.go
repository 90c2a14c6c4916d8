package checkout

import (
	"context"
	"fmt"
	"log/slog"

	"storefront/internal/platform/store"
)

// readBack settles a batch whose statement failed after its COMMIT had run
// (@done = 1): it reads the batch's orders back and answers from what it
// finds.
//
// On one MariaDB server a COMMIT that ran is a commit, and a later error is
// the statement's. On Galera it is not: a replicated write set that
// conflicts with the batch aborts it (a brute-force abort) while its
// compound statement runs; the server rolls the transaction back, the
// statement's COMMIT then commits nothing, and the abort surfaces as 1213 at
// the next statement. Seen as 132 batches that "committed" and had no
// order (docs/operations.md). The read goes on the batch's own connection c (its
// transaction ended: Send rolled back and read @done on it), where a commit
// is visible once its statement has returned; a second connection, taken
// while this one is held, could wait for a pool that the batch's own
// buyers' requests have emptied.
//
// Every order found: the batch committed, and its buyers get their orders.
// None: it did not, and stmtErr goes back to the batch's retries (a 1213 is
// a conflict retried like any other). A read that fails leaves the outcome
// unknown, said as such (ErrCommitUnknown: the buyer's retry with the same
// key replays the order if it exists).
func readBack(ctx context.Context, c *store.Conn, placed []*Order, stmtErr error) error {
	found, err := findOrderIDs(ctx, c, placed)
	switch {
	case err != nil:
		slog.WarnContext(ctx, "checkout batch: the statement failed after its COMMIT and its orders could not be read back: outcome unknown",
			"orders", len(placed), "err", stmtErr, "read_err", err)
		return fmt.Errorf("%w: the batch's statement failed after COMMIT (%w) and reading its orders back failed: %w", store.ErrCommitUnknown, stmtErr, err)
	case found == len(placed):
		slog.WarnContext(ctx, "checkout batch: committed; the statement failed after its COMMIT, the orders were read back",
			"orders", len(placed), "err", stmtErr)
		return nil
	case found == 0:
		slog.InfoContext(ctx, "checkout batch: not committed (aborted at or before its COMMIT, e.g. a Galera certification conflict); none of its orders exist, it runs again if the error is a conflict",
			"orders", len(placed), "err", stmtErr)
		for _, o := range placed {
			o.ID = 0
		}
		return fmt.Errorf("writing the batch: not committed: %w", stmtErr)
	default:
		// One transaction: all or nothing. Never seen; said if it is.
		return fmt.Errorf("%w: the batch's statement failed after COMMIT (%w) and %d of its %d orders exist", store.ErrCommitUnknown, stmtErr, found, len(placed))
	}
}
