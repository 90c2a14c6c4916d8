package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"storefront/internal/platform/store"
)

// Retry runs a transaction again only on a transient conflict (deadlock,
// lock-wait timeout, SQLite busy), at most three runs in all; any other
// error, a business refusal above all, is answered after one run: running
// an order again because it was out of stock would only repeat the refusal,
// and running a write again on an error that is not a conflict may do it twice.
func TestRetryRunsAgainOnlyOnConflicts(t *testing.T) {
	errOutOfStock := errors.New("out of stock")
	busy := sqliteBusy(t)
	if store.RetryCause(busy) != "busy" {
		t.Fatalf("a real SQLITE_BUSY (%v) is not recognised as busy", busy)
	}
	for _, tc := range []struct {
		name string
		err  error
		runs int
	}{
		{"success", nil, 1},
		{"business error", fmt.Errorf("%w: SKU 1 has fewer than 2 left", errOutOfStock), 1},
		{"duplicate key", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, 1},
		{"syntax error", &mysql.MySQLError{Number: 1064}, 1},
		{"unavailable", store.ErrUnavailable, 1},
		{"deadlock", &mysql.MySQLError{Number: 1213}, 3},
		{"lock wait timeout", fmt.Errorf("deducting: %w", &mysql.MySQLError{Number: 1205}), 3},
		{"sqlite busy", fmt.Errorf("placing: %w", busy), 3},
	} {
		runs := 0
		err := store.Retry(context.Background(), func() error { runs++; return tc.err })
		if runs != tc.runs {
			t.Errorf("%s: ran %d times, want %d", tc.name, runs, tc.runs)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: answered %v, want the attempt's own error %v", tc.name, err, tc.err)
		}
	}

	// A conflict that clears is answered by the run that succeeded.
	runs := 0
	err := store.Retry(context.Background(), func() error {
		runs++
		if runs == 1 {
			return &mysql.MySQLError{Number: 1213}
		}
		return nil
	})
	if err != nil || runs != 2 {
		t.Errorf("a deadlock then success: %v after %d runs, want nil after 2", err, runs)
	}

	// A caller that has given up is not run again.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs = 0
	_ = store.Retry(ctx, func() error { runs++; return &mysql.MySQLError{Number: 1213} })
	if runs != 1 {
		t.Errorf("with the context done: ran %d times, want 1", runs)
	}
}

// sqliteBusy returns the error SQLite really gives a second writer while a
// first holds the write lock (no busy timeout, so at once).
func sqliteBusy(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	first, second := open(), open()
	ctx := context.Background()
	c1, err := first.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if _, err := c1.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer c1.ExecContext(ctx, "ROLLBACK") //nolint:errcheck
	_, err = second.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err == nil {
		t.Fatal("a second writer got the write lock while the first held it")
	}
	return err
}
