package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"testing"

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
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		a := stdlib.OpenDB(*cfg)
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return dsnOf(cfg, name)
}

// dsnOf is cfg's server and user with database name, as a URL.
func dsnOf(cfg *pgx.ConnConfig, name string) string {
	u := url.URL{Scheme: "postgres", Path: "/" + name, RawQuery: "sslmode=disable"}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	if cfg.Host == "" || cfg.Host[0] == '/' { // a socket: name its directory
		u.Host = "localhost"
		u.RawQuery += "&host=" + url.QueryEscape(cfg.Host) + "&port=" + strconv.Itoa(int(cfg.Port))
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	return u.String()
}

// PostgresRole creates a login role of the test's own whose connections
// PostgreSQL caps at limit (CONNECTION LIMIT, checked as max_connections is,
// with the same 53300 "too many connections"), and an empty database it
// owns. It returns the --db value that connects as that role, and the one
// that connects as the suite's user (not counted against limit), for
// reading what the role's processes wrote. Both go at the end of the test.
func PostgresRole(t testing.TB, limit int) (spec, adminSpec string) {
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
	pw := hex.EncodeToString(b[:]) + "pw"
	if _, err := admin.Exec("CREATE ROLE " + name + " LOGIN PASSWORD '" + pw + "' CONNECTION LIMIT " + strconv.Itoa(limit)); err != nil {
		t.Fatalf("creating test role: %v", err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + name + " OWNER " + name); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		a := stdlib.OpenDB(*cfg)
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_, _ = a.ExecContext(context.Background(), "DROP ROLE IF EXISTS "+name)
	})
	role := cfg.Copy()
	role.User, role.Password = name, pw
	return "postgres:" + dsnOf(role, name), "postgres:" + dsnOf(cfg, name)
}
