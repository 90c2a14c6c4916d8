// Package store opens the database behind the ent client and owns the one
// transaction helper every domain package uses.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // pure-Go SQLite: the default needs no C compiler

	"storefront/ent"
)

// DefaultDB is the embedded default: a file a new user never has to set up.
const DefaultDB = "sqlite:data/storefront.db"

// DB is an opened database: the ent client plus what the hot paths need
// beneath it (the dialect, the raw pool).
type DB struct {
	Client  *ent.Client
	SQL     *sql.DB
	Dialect string // dialect.SQLite or dialect.MySQL
	// MariaDB: the MySQL-dialect server is MariaDB, which runs anonymous
	// compound statements (BEGIN NOT ATOMIC … END) that MySQL lacks.
	MariaDB bool
}

// Open parses "sqlite:PATH" or "mysql:DSN" and returns a ready pool.
// opts may wrap the driver (the query-counting tests do).
func Open(ctx context.Context, spec string, opts ...Option) (*DB, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok || rest == "" {
		return nil, fmt.Errorf("database %q: want sqlite:PATH or mysql:DSN", spec)
	}
	var (
		db  *sql.DB
		dia string
		err error
	)
	switch kind {
	case "sqlite":
		db, err = openSQLite(rest)
		dia = dialect.SQLite
	case "mysql":
		db, err = openMySQL(rest)
		dia = dialect.MySQL
	default:
		return nil, fmt.Errorf("database %q: unknown kind %q (want sqlite or mysql)", spec, kind)
	}
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s unreachable: %w", kind, err)
	}
	var mariadb bool
	if dia == dialect.MySQL {
		var v string
		if err := db.QueryRowContext(pctx, "SELECT VERSION()").Scan(&v); err != nil {
			db.Close()
			return nil, fmt.Errorf("database %s: reading its version: %w", kind, err)
		}
		mariadb = strings.Contains(strings.ToLower(v), "mariadb")
	}
	var drv dialect.Driver = entsql.OpenDB(dia, db)
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: db, Dialect: dia, MariaDB: mariadb}, nil
}

// Option adjusts Open.
type Option func(*options)

type options struct {
	wrap func(dialect.Driver) dialect.Driver
}

// WithDriverWrapper wraps the ent driver, e.g. to count statements in tests.
func WithDriverWrapper(f func(dialect.Driver) dialect.Driver) Option {
	return func(o *options) { o.wrap = f }
}

func openSQLite(path string) (*sql.DB, error) {
	if dir := filepath.Dir(path); dir != "." && path != ":memory:" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	// IMMEDIATE transactions take the write lock at BEGIN, so two writers queue
	// on the busy timeout instead of both reading and then one failing to
	// upgrade its lock (SQLITE_BUSY mid-transaction cannot be waited out).
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// SQLite has one writer at a time; a small pool avoids a crowd of
	// connections spinning in the busy handler.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	return db, nil
}

func openMySQL(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql DSN: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// One round trip per statement: every extra round trip made while a hot SKU
	// row is locked costs everyone queued on it.
	cfg.InterpolateParams = true
	// The group-commit batch sends its writes as one multi-statement query
	// (checkout/batch_mysql.go), its values written in by checkout's sqlText
	// (plain ASCII quoted, anything else as a hex literal: nothing to
	// escape). Every other statement binds its values as parameters, which
	// the driver escapes client-side; none is built from input, so several
	// statements per query add no injection path.
	cfg.MultiStatements = true
	// Affected rows count changed rows only: CAS updates are checked by
	// their affected rows, and a found-rows count would also count a row
	// an UPDATE matched without changing it.
	cfg.ClientFoundRows = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["charset"]; !ok {
		cfg.Params["charset"] = "utf8mb4"
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(64)
	db.SetConnMaxLifetime(30 * time.Minute)
	return db, nil
}

// Migrate creates or upgrades the schema. It never drops anything, so an
// older binary's migrate against a newer schema is harmless too
// (docs/operations.md, "Migrations").
func (d *DB) Migrate(ctx context.Context) error {
	if err := d.Client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	return nil
}

// Close releases the pool.
func (d *DB) Close() error { return d.Client.Close() }

// Ping reports whether the database answers (for /readyz).
func (d *DB) Ping(ctx context.Context) error {
	if err := d.SQL.PingContext(ctx); err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	return nil
}
