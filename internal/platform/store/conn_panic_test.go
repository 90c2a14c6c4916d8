package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A panic while a batch's answer is read (the MySQL driver's readColumns on
// an answer cut short, seen while a Galera node rejoined) is answered as a
// cut connection: ErrCommitUnknown, the connection closed, not pooled, and
// the next batch runs. It reached the batch's goroutine as a panic, and its
// orders answered INTERNAL.
func TestPanicReadingABatchAnswerIsCommitUnknown(t *testing.T) {
	for _, b := range []testdb.Backend{testdb.MySQL, testdb.Postgres} {
		t.Run(string(b), func(t *testing.T) {
			db := testdb.Open(t, b)
			ctx := context.Background()
			err := db.OnConn(ctx, func(ctx context.Context, c *store.Conn) error {
				return c.Send(ctx, "SELECT 1", func(*sql.Rows) error { panic("cut short") }, "", nil)
			})
			if !errors.Is(err, store.ErrCommitUnknown) {
				t.Fatalf("a panic reading the answer: %v, want ErrCommitUnknown", err)
			}
			var got int
			err = db.OnConn(ctx, func(ctx context.Context, c *store.Conn) error {
				return c.Send(ctx, "SELECT 2", func(rs *sql.Rows) error { return rs.Scan(&got) }, "", nil)
			})
			if err != nil || got != 2 {
				t.Errorf("the next batch: %d, %v", got, err)
			}
		})
	}
}
