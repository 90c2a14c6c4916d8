package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"testing"

	"storefront/internal/platform/store"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresDSNEnv names the variable holding a PostgreSQL DSN (libpq URL or
// key=value) of a server where tests may create and drop databases.
const PostgresDSNEnv = "STOREFRONT_TEST_POSTGRES_DSN"

// RequirePostgresEnv turns a missing PostgreSQL DSN into a test failure.
const RequirePostgresEnv = "STOREFRONT_TEST_REQUIRE_POSTGRES"

// SkipUnlessPostgres skips (or, in CI, fails) when no PostgreSQL DSN is
// configured.
func SkipUnlessPostgres(t testing.TB) string {
	t.Helper()
	return skipUnlessSet(t, "PostgreSQL", PostgresDSNEnv, RequirePostgresEnv, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
}

// freshPostgres creates an empty database and returns its DSN; it is
// dropped at the end of the test, its connections with it.
func freshPostgres(t testing.TB) string {
	t.Helper()
	cfg, name := newPostgres(t, func(string) []string { return nil })
	return store.PostgresURL(cfg, name)
}

// newPostgres creates a database of a fresh name, after the statements
// before(name) (a role to own it), as the suite's user; the database, and a
// role of the same name, go at the end of the test.
func newPostgres(t testing.TB, before func(name string) []string) (*pgx.ConnConfig, string) {
	t.Helper()
	base := SkipUnlessPostgres(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresDSNEnv, err)
	}
	admin := stdlib.OpenDB(*cfg)
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sf_test_" + hex.EncodeToString(b[:])
	stmts := before(name)
	create := "CREATE DATABASE " + name
	if len(stmts) > 0 {
		create += " OWNER " + name
	}
	for _, q := range append(stmts, create) {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("creating the test's database: %v", err)
		}
	}
	t.Cleanup(func() {
		a := stdlib.OpenDB(*cfg)
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		if len(stmts) > 0 {
			_, _ = a.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+name)
		}
	})
	return cfg, name
}

// PostgresRole creates a login role of the test's own whose connections
// PostgreSQL caps at limit (CONNECTION LIMIT, checked as max_connections is,
// with the same 53300 "too many connections"), and an empty database it
// owns. It returns the --db value that connects as that role, and the one
// that connects as the suite's user (not counted against limit), for
// reading what the role's processes wrote. Both go at the end of the test.
func PostgresRole(t testing.TB, limit int) (spec, adminSpec string) {
	t.Helper()
	var pw string
	cfg, name := newPostgres(t, func(name string) []string {
		pw = name + "pw"
		return []string{"CREATE ROLE " + name + " LOGIN PASSWORD '" + pw + "' CONNECTION LIMIT " + strconv.Itoa(limit)}
	})
	role := cfg.Copy()
	role.User, role.Password = name, pw
	return "postgres:" + store.PostgresURL(role, name), "postgres:" + store.PostgresURL(cfg, name)
}
