package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"storefront/ent"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A server out of connection slots is busy, not broken: PostgreSQL's 53300
// (max_connections, a role's or a database's CONNECTION LIMIT) and MySQL's
// 1040 (max_connections), 1203 (max_user_connections) and 1226 (an
// account's MAX_USER_CONNECTIONS) are UNAVAILABLE, so a buyer retries and
// a payment provider is answered 503 and sends again.
func TestClassifyTooManyConnections(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}, true},
		{&pgconn.PgError{Severity: "FATAL", Code: "53300", Message: `too many connections for role "shop"`}, true},
		{&pgconn.PgError{Severity: "FATAL", Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Severity: "ERROR", Code: "23503", Message: "insert or update violates foreign key constraint"}, false},
		{&mysql.MySQLError{Number: 1040, Message: "Too many connections"}, true},
		{&mysql.MySQLError{Number: 1203, Message: "User shop already has more than 'max_user_connections' active connections"}, true},
		{&mysql.MySQLError{Number: 1226, Message: "User 'shop' has exceeded the 'max_user_connections' resource (current value: 10)"}, true},
		{&mysql.MySQLError{Number: 1146, Message: "Table 'test.x' doesn't exist"}, false},
	} {
		err := fmt.Errorf("claiming idempotency key: %w", tc.err)
		if got := errors.Is(store.Classify(err), store.ErrUnavailable); got != tc.want {
			t.Errorf("Classify(%v) unavailable = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// The same, from a real server: a role (PostgreSQL) or an account (MariaDB)
// allowed one connection, held, and a second one asked for by a statement
// and by a transaction.
func TestTooManyConnectionsIsUnavailable(t *testing.T) {
	ctx := context.Background()
	for _, b := range testdb.Servers {
		t.Run(string(b), func(t *testing.T) {
			var spec string
			switch b {
			case testdb.Postgres:
				spec, _ = testdb.PostgresRole(t, 1)
			case testdb.MySQL:
				spec = mysqlAccount(t, 1)
			}
			db, err := store.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			held, err := db.SQL.Conn(ctx) // the one the account may have
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			_, err = db.Client.Goods.Query().Count(ctx)
			if err == nil {
				t.Fatal("a second connection past the limit: no error")
			}
			var pe *pgconn.PgError
			var me *mysql.MySQLError
			if !(errors.As(err, &pe) && pe.Code == "53300") && !(errors.As(err, &me) && me.Number == 1226) {
				t.Fatalf("a second connection past the limit: %v, want 53300 or 1226", err)
			}
			if !errors.Is(store.Classify(err), store.ErrUnavailable) {
				t.Errorf("Classify(%v) is not ErrUnavailable", err)
			}
			err = store.WithTx(ctx, db, func(context.Context, *ent.Tx) error { return nil })
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("WithTx past the limit: %v, want ErrUnavailable", err)
			}
		})
	}
}

// mysqlAccount creates an account of the test's own that may hold limit
// connections (MAX_USER_CONNECTIONS), with every right on a fresh
// database, and returns the --db value that connects as it.
func mysqlAccount(t *testing.T, limit int) string {
	t.Helper()
	root, err := mysql.ParseDSN(testdb.Spec(t, testdb.MySQL)[len("mysql:"):])
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", root.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var r [6]byte
	_, _ = rand.Read(r[:])
	user, pw := "sf_"+hex.EncodeToString(r[:]), hex.EncodeToString(r[:])+"pw"
	for _, q := range []string{
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s' WITH MAX_USER_CONNECTIONS %d", user, pw, limit),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", root.DBName, user),
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		if a, err := sql.Open("mysql", root.FormatDSN()); err == nil {
			_, _ = a.Exec(fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", user))
			a.Close()
		}
	})
	c := root.Clone()
	c.User, c.Passwd = user, pw
	return "mysql:" + c.FormatDSN()
}
