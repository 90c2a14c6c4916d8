package inventory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"storefront/internal/testsupport/testdb"
)

// The PostgreSQL batch's deadline check counts the server's time from the
// query's arrival, across its statements (they share statement_timestamp()),
// and fails only past the budget: neither folded into a constant error by
// the planner nor taken for a guard's ErrMoved. pgx cancels a query on
// the server when its context ends, but a cancel that never arrives (the
// network between) must still not let a batch commit after its buyers were
// told it failed.
func TestPostgresDeadlineCheck(t *testing.T) {
	db := testdb.Open(t, testdb.Postgres)
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, "SELECT pg_sleep(0.05); "+pgDeadlineCheck(time.Minute)); err != nil {
		t.Errorf("within its budget: %v, want no error", err)
	}
	_, err := db.SQL.ExecContext(ctx, "SELECT pg_sleep(0.05); "+pgDeadlineCheck(10*time.Millisecond))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22P02" {
		t.Errorf("past its budget: %v, want the deadline check's 22P02 (no guard)", err)
	}
}
