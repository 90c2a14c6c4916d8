package main

import (
	"context"
	"fmt"
	"strings"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

// dbFlags are the database every command that opens one takes.
type dbFlags struct {
	DB           string `name:"db" env:"STOREFRONT_DB" default:"${db}" help:"database: sqlite:PATH, mysql:DSN or postgres:DSN; mysql:DSN1,DSN2,… for the nodes of a Galera cluster, of which the first ready one takes the connections"`
	DBMaxConns   int    `name:"db-max-conns" env:"STOREFRONT_DB_MAX_CONNS" default:"${db_max_conns}" help:"most connections this process keeps to a MySQL or PostgreSQL server, besides the batch pool's"`
	DBBatchConns int    `name:"db-batch-conns" env:"STOREFRONT_DB_BATCH_CONNS" default:"${db_batch_conns}" help:"most connections of the group-commit batch's pool; at least twice --group-inflight"`
}

func (d *dbFlags) Validate() error {
	if d.DBMaxConns < 1 || d.DBBatchConns < 1 {
		return fmt.Errorf("--db-max-conns %d, --db-batch-conns %d: each must be at least 1", d.DBMaxConns, d.DBBatchConns)
	}
	return nil
}

// sqlite reports whether the database is the embedded file, which every
// command that writes brings up to date.
func (d *dbFlags) sqlite() bool { return strings.HasPrefix(d.DB, "sqlite:") }

// open opens spec (--db, or serve's --db-writer) with the pools' sizes,
// every statement a span when tr traces, migrated when migrate says so.
func (d *dbFlags) open(ctx context.Context, spec string, migrate bool, tr *tracing.Tracing) (*store.DB, error) {
	wrap := store.WithConnectorWrapper(nil)
	if tr.On() {
		wrap = store.WithConnectorWrapper(tr.Connector)
	}
	db, err := store.Open(ctx, spec, store.WithPools(d.DBMaxConns, d.DBBatchConns), wrap)
	if err != nil || !migrate {
		return db, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// Goods written before slugs and the listing existed get theirs.
	n, err := catalog.Backfill(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		fmt.Printf("listed %d goods written before the listing existed\n", n)
	}
	return db, nil
}

// serveDBFlags are serve's databases: --db, the writers' --db-writer, and
// whether the schema is applied on start.
type serveDBFlags struct {
	Database dbFlags `embed:""`
	DBWriter string  `name:"db-writer" env:"STOREFRONT_DB_WRITER" help:"where checkout, payments and stock changes write: the nodes of a Galera cluster, mysql:DSN1,DSN2,… in the same order on every instance; the first ready node takes the writes (default: --db)"`
	Migrate  *bool   `name:"migrate" env:"STOREFRONT_MIGRATE" help:"apply the schema on start (default on for SQLite and with --demo)"`
}

// open opens --db and, on a Galera cluster, --db-writer: the hot rows'
// writes go through one node (internal/platform/store/nodes_mysql.go says
// why), reads stay on this instance's own node. close closes both.
func (d *serveDBFlags) open(ctx context.Context, demo bool, tr *tracing.Tracing) (db, writer *store.DB, close func(), err error) {
	migrate := demo || d.Database.sqlite()
	if d.Migrate != nil {
		migrate = *d.Migrate
	}
	if db, err = d.Database.open(ctx, d.Database.DB, migrate, tr); err != nil {
		return nil, nil, nil, err
	}
	if d.DBWriter == "" {
		return db, db, func() { db.Close() }, nil
	}
	if writer, err = d.Database.open(ctx, d.DBWriter, false, tr); err != nil {
		db.Close()
		return nil, nil, nil, fmt.Errorf("--db-writer: %w", err)
	}
	return db, writer, func() { writer.Close(); db.Close() }, nil
}
