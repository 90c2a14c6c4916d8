package store_test

import (
	"context"
	"strings"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A list of servers is for the nodes of a Galera cluster: on a server with
// wsrep off it would spread writes over servers that do not replicate each
// other, so Open refuses it and says why.
func TestNodeListRefusedWithoutWsrep(t *testing.T) {
	dsn := testdb.SkipUnlessMySQL(t)
	db, err := store.Open(context.Background(), "mysql:"+dsn+","+dsn)
	if err == nil {
		db.Close()
		t.Fatal("a list of two plain MariaDB servers opened; want an error")
	}
	if !strings.Contains(err.Error(), "Galera") {
		t.Errorf("error %q does not say the list is for a Galera cluster", err)
	}
}
