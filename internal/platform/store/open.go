// Package store opens the database behind the ent client and owns the one
// transaction helper every domain package uses.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
)

// DefaultDB is the embedded default: a file a new user never has to set up.
const DefaultDB = "sqlite:data/storefront.db"

// DB is an opened database: the ent client plus what the hot paths need
// beneath it (the dialect, the raw pool).
type DB struct {
	Client *ent.Client
	SQL    *sql.DB
	// Dialect is what the database's SQL spells its own way (dialect.go).
	Dialect Dialect
	// Kind is the server behind the dialect, found once by Open: the one
	// value a domain package may choose a writer by (checkout's batcher).
	Kind Kind
	// Batch is a small pool whose connections take several statements in
	// one query (MySQL, PostgreSQL): the group-commit batch's one round
	// trip. Every other statement goes through SQL, where multi-statement
	// queries are off. Nil on SQLite.
	Batch *sql.DB
	stop  func()
}

// Kind is a kind of database server.
type Kind int

const (
	SQLite Kind = iota
	MySQL
	// MariaDB speaks MySQL and also runs anonymous compound statements
	// (BEGIN NOT ATOMIC … END), which MySQL lacks.
	MariaDB
	Postgres
)

// opened is what a dialect's open returns (open_sqlite.go, open_mysql.go,
// open_postgres.go).
type opened struct {
	db, batch *sql.DB
	dialect   Dialect
	// kind finds the server's kind once the pool answers.
	kind func(ctx context.Context, db *sql.DB) (Kind, error)
	// stop, when set, ends what the pools depend on (a Galera list's
	// probe), after they close.
	stop func()
}

// Open parses "sqlite:PATH", "mysql:DSN" or "postgres:DSN" and returns a
// ready pool. opts may wrap the driver (the query-counting tests do).
func Open(ctx context.Context, spec string, opts ...Option) (*DB, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok || rest == "" {
		return nil, fmt.Errorf("database %q: want sqlite:PATH, mysql:DSN or postgres:DSN", spec)
	}
	var (
		op  opened
		err error
	)
	switch kind {
	case "sqlite":
		op, err = openSQLite(rest, o.conn)
	case "mysql":
		op, err = openMySQL(rest, o.pools(), o.conn)
	case "postgres":
		op, err = openPostgres(rest, o.pools(), o.conn)
	default:
		return nil, fmt.Errorf("database %q: unknown kind %q (want sqlite, mysql or postgres)", spec, kind)
	}
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fail := func(err error) (*DB, error) {
		op.db.Close()
		if op.batch != nil {
			op.batch.Close()
		}
		if op.stop != nil {
			op.stop()
		}
		return nil, err
	}
	if err := op.db.PingContext(pctx); err != nil {
		return fail(fmt.Errorf("database %s unreachable: %w", kind, err))
	}
	k, err := op.kind(pctx, op.db)
	if err != nil {
		return fail(fmt.Errorf("database %s: %w", kind, err))
	}
	var drv dialect.Driver = entsql.OpenDB(op.dialect.Name(), op.db)
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: op.db, Dialect: op.dialect, Kind: k, Batch: op.batch, stop: op.stop}, nil
}

// Option adjusts Open.
type Option func(*options)

type options struct {
	wrap                 func(dialect.Driver) dialect.Driver
	conn                 ConnectorWrapper
	maxConns, batchConns int
}

// DefaultMaxConns and DefaultBatchConns are one process's connections to a
// server (MySQL, PostgreSQL): the main pool and the group-commit batch's.
// Every connection is a server process on PostgreSQL, whose max_connections
// is 100 by default (3 of them kept for superusers), MariaDB's 151: 24 a
// process lets three instances and a command (migrate, close-expired,
// reconcile) share a stock PostgreSQL, 4 × 24 = 96 ≤ 97, each pool full.
// 64 + 8 made two instances under load fail with 53300 "too many clients".
// At 64 buyers no cost of the smaller pools showed above a loaded
// machine's noise (docs/benchmarks.md, "Issue 38: connection budgets"):
// orders of a hot SKU queue on its row lock whatever the pool, and the
// group-commit batch takes single-SKU orders whole on its own pool.
const (
	DefaultMaxConns = 20
	// DefaultBatchConns: checkout's batches in flight, GroupInFlight (2)
	// in each of its two lanes; a rerun runs after its batch, on the same
	// connection.
	DefaultBatchConns = 4
)

// pools is the two pool sizes Open gives the server's dialect.
type pools struct{ main, batch int }

func (o options) pools() pools {
	p := pools{DefaultMaxConns, DefaultBatchConns}
	if o.maxConns > 0 {
		p.main = o.maxConns
	}
	if o.batchConns > 0 {
		p.batch = o.batchConns
	}
	return p
}

// WithPools sets the most connections the main pool and the batch pool
// keep open (≤ 0: DefaultMaxConns, DefaultBatchConns); idle ones are kept
// up to the same number. SQLite keeps its own small pool of 4 (one writer).
func WithPools(maxConns, batchConns int) Option {
	return func(o *options) { o.maxConns, o.batchConns = maxConns, batchConns }
}

// WithDriverWrapper wraps the ent driver, e.g. to count statements in tests.
func WithDriverWrapper(f func(dialect.Driver) dialect.Driver) Option {
	return func(o *options) { o.wrap = f }
}

// ConnectorWrapper wraps the database/sql connector of each pool, given
// the server's db.system name (sqlite, mysql, postgresql): tracing's span
// per statement sees every statement, ent's, raw SQL's and the batch's, in
// and out of transactions.
type ConnectorWrapper func(system string, c driver.Connector) driver.Connector

// WithConnectorWrapper wraps every pool's connector with f (nil: none).
func WithConnectorWrapper(f ConnectorWrapper) Option {
	return func(o *options) { o.conn = f }
}

// open is a pool on c, wrapped by w when there is one.
func (w ConnectorWrapper) open(system string, c driver.Connector) *sql.DB {
	if w != nil {
		c = w(system, c)
	}
	return sql.OpenDB(c)
}

// dsnConnector is a driver opened by DSN as a connector.
type dsnConnector struct {
	d   driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

// Close releases the pools.
func (d *DB) Close() error {
	if d.Batch != nil {
		d.Batch.Close()
	}
	err := d.Client.Close()
	if d.stop != nil {
		d.stop()
	}
	return err
}

// Ping reports whether the database answers (for /readyz).
func (d *DB) Ping(ctx context.Context) error {
	if err := d.SQL.PingContext(ctx); err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	return nil
}
