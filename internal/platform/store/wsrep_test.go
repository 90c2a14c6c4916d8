package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A Galera node out of the cluster answers 1047, and 1180 at COMMIT: both
// are "retry later" (UNAVAILABLE), never INTERNAL; any other 1180 is not
// the node's absence and stays what it is.
func TestClassifyGaleraNodeNotReady(t *testing.T) {
	for _, tc := range []struct {
		err  *mysql.MySQLError
		want bool
	}{
		{&mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true},
		{&mysql.MySQLError{Number: 1180, Message: `Got error 6 "No such device or address" during COMMIT`}, true},
		{&mysql.MySQLError{Number: 1180, Message: "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)"}, true},
		{&mysql.MySQLError{Number: 1180, Message: `Got error 28 "No space left on device" during COMMIT`}, false},
		{&mysql.MySQLError{Number: 1146, Message: "Table 'test.x' doesn't exist"}, false},
	} {
		err := fmt.Errorf("writing the batch: %w", tc.err)
		if got := errors.Is(store.Classify(err), store.ErrUnavailable); got != tc.want {
			t.Errorf("Classify(%d %q) unavailable = %v, want %v", tc.err.Number, tc.err.Message, got, tc.want)
		}
	}
}

// A server without wsrep (plain MariaDB, SQLite) is ready when it answers:
// it has no Galera state to be out of.
func TestReadyWithoutWsrep(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		if err := db.Ready(context.Background()); err != nil {
			t.Errorf("Ready: %v, want nil", err)
		}
	})
}
