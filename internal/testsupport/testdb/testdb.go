// Package testdb gives each test a fresh, migrated database: SQLite always,
// MariaDB/MySQL when STOREFRONT_TEST_MYSQL_DSN is set, PostgreSQL when
// STOREFRONT_TEST_POSTGRES_DSN is set. Locally the server variants skip with
// a message; with STOREFRONT_TEST_REQUIRE_MYSQL=1 or
// STOREFRONT_TEST_REQUIRE_POSTGRES=1 (CI) a missing DSN is a failure, never
// a silent skip.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"

	"storefront/internal/platform/store"
)

// DSNEnv names the variable holding a go-sql-driver DSN of a server where
// tests may create and drop databases.
const DSNEnv = "STOREFRONT_TEST_MYSQL_DSN"

// RequireEnv turns a missing MySQL DSN into a test failure.
const RequireEnv = "STOREFRONT_TEST_REQUIRE_MYSQL"

// Backend names a database kind under test.
type Backend string

const (
	SQLite   Backend = "sqlite"
	MySQL    Backend = "mysql"
	Postgres Backend = "postgres"
)

// Backends is every backend a database test runs on.
var Backends = []Backend{SQLite, MySQL, Postgres}

// Servers is the backends that run as servers (several connections write
// at once, two instances can share one).
var Servers = []Backend{MySQL, Postgres}

// Each runs fn as a subtest on every backend: "sqlite", "mysql" and
// "postgres".
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(string(b), func(t *testing.T) { fn(t, Open(t, b)) })
	}
}

// Open returns a fresh migrated database of kind b, closed and dropped at
// the end of the test.
func Open(t testing.TB, b Backend, opts ...store.Option) *store.DB {
	t.Helper()
	spec := Spec(t, b)
	db, err := store.Open(context.Background(), spec, opts...)
	if err != nil {
		t.Fatalf("opening %s: %v", b, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrating %s: %v", b, err)
	}
	return db
}

// Spec creates an empty database of kind b and returns its --db value
// (for tests that start the binary).
func Spec(t testing.TB, b Backend) string {
	t.Helper()
	switch b {
	case SQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	case MySQL:
		return "mysql:" + freshMySQL(t)
	case Postgres:
		return "postgres:" + freshPostgres(t)
	}
	t.Fatalf("unknown backend %q", b)
	return ""
}

// SkipUnlessMySQL skips (or, in CI, fails) when no MySQL DSN is configured.
func SkipUnlessMySQL(t testing.TB) string {
	t.Helper()
	return skipUnlessSet(t, "MariaDB", DSNEnv, RequireEnv, "root@tcp(127.0.0.1:3306)/test")
}

// skipUnlessSet returns the DSN in env, or skips the test saying how to set
// it, or fails it when require is "1" (CI: never a silent skip).
func skipUnlessSet(t testing.TB, server, env, require, example string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s is not set but %s=1: the %s tests must run here", env, require, server)
		}
		t.Skipf("%s tests skipped: set %s (e.g. %s) to run them", server, env, example)
	}
	return dsn
}

func freshMySQL(t testing.TB) string {
	t.Helper()
	base := SkipUnlessMySQL(t)
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s: %v", DSNEnv, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sf_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("mysql", cfg.FormatDSN()); err == nil {
			_, _ = a.Exec("DROP DATABASE IF EXISTS " + name)
			a.Close()
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}
