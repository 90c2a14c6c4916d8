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
	Dialect string // dialect.SQLite or dialect.MySQL: ent's name for the SQL spoken
	// Kind is the server behind the dialect, found once by Open: the one
	// value a domain package may choose a writer by (checkout's batcher).
	Kind Kind
	// Batch is a small pool whose connections take several statements in
	// one query (MySQL): the group-commit batch's one round trip. Every
	// other statement goes through SQL, where multi-statement queries are
	// off. Nil on SQLite.
	Batch *sql.DB
}

// Kind is a kind of database server.
type Kind int

const (
	SQLite Kind = iota
	MySQL
	// MariaDB speaks MySQL and also runs anonymous compound statements
	// (BEGIN NOT ATOMIC … END), which MySQL lacks.
	MariaDB
)

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
		db, batch *sql.DB
		dia       string
		err       error
	)
	switch kind {
	case "sqlite":
		db, err = openSQLite(rest)
		dia = dialect.SQLite
	case "mysql":
		db, batch, err = openMySQL(rest)
		dia = dialect.MySQL
	default:
		return nil, fmt.Errorf("database %q: unknown kind %q (want sqlite or mysql)", spec, kind)
	}
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fail := func(err error) (*DB, error) {
		db.Close()
		if batch != nil {
			batch.Close()
		}
		return nil, err
	}
	if err := db.PingContext(pctx); err != nil {
		return fail(fmt.Errorf("database %s unreachable: %w", kind, err))
	}
	k := SQLite
	if dia == dialect.MySQL {
		var v string
		if err := db.QueryRowContext(pctx, "SELECT VERSION()").Scan(&v); err != nil {
			return fail(fmt.Errorf("database %s: reading its version: %w", kind, err))
		}
		k = MySQL
		if strings.Contains(strings.ToLower(v), "mariadb") {
			k = MariaDB
			// A Galera node: its conflicts are retried more (wsrep_mysql.go).
			if on, err := wsrepOn(pctx, db); err == nil && on {
				galera.Store(true)
			}
		}
	}
	var drv dialect.Driver = entsql.OpenDB(dia, db)
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: db, Dialect: dia, Kind: k, Batch: batch}, nil
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

// openMySQL opens the main pool and the batch pool (DB.Batch).
func openMySQL(dsn string) (main, batch *sql.DB, err error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("mysql DSN: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// One round trip per statement: every extra round trip made while a hot SKU
	// row is locked costs everyone queued on it.
	cfg.InterpolateParams = true
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
	if main, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
		return nil, nil, err
	}
	main.SetMaxOpenConns(64)
	main.SetMaxIdleConns(64)
	main.SetConnMaxLifetime(30 * time.Minute)
	// The group-commit batch sends its writes as one multi-statement query
	// (checkout/batch_mysql.go), its values written inline by Text (plain
	// ASCII quoted, anything else as a hex literal: nothing to escape).
	// Only its own pool takes several statements per query, so no other
	// statement can carry a second one.
	cfg.MultiStatements = true
	if batch, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
		main.Close()
		return nil, nil, err
	}
	// A few batches are in flight at once (checkout's GroupInFlight, with
	// one rerun each): a small pool, never waited on in practice.
	batch.SetMaxOpenConns(8)
	batch.SetMaxIdleConns(8)
	batch.SetConnMaxLifetime(30 * time.Minute)
	return main, batch, nil
}

// Close releases the pools.
func (d *DB) Close() error {
	if d.Batch != nil {
		d.Batch.Close()
	}
	return d.Client.Close()
}

// Ping reports whether the database answers (for /readyz).
func (d *DB) Ping(ctx context.Context) error {
	if err := d.SQL.PingContext(ctx); err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	return nil
}
