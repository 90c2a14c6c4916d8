package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// openMySQL opens the main pool and the batch pool (DB.Batch), on one
// server or on the first ready node of a Galera list (nodes_mysql.go).
func openMySQL(dsns string, size pools, wrap ConnectorWrapper) (opened, error) {
	var cfgs []*mysql.Config
	for _, dsn := range splitNodes(dsns) {
		cfg, err := mysqlConfig(dsn)
		if err != nil {
			return opened{}, err
		}
		cfgs = append(cfgs, cfg)
	}
	switch len(cfgs) {
	case 0:
		return opened{}, errors.New("mysql DSN: empty")
	case 1:
		return openPools(func(multi bool) (*sql.DB, error) {
			c := cfgs[0].Clone()
			c.MultiStatements = multi
			if wrap == nil {
				return sql.Open("mysql", c.FormatDSN())
			}
			conn, err := mysql.NewConnector(c)
			if err != nil {
				return nil, err
			}
			return wrap.open("mysql", conn), nil
		}, size, nil)
	}
	set, err := newNodeSet(cfgs)
	if err != nil {
		return opened{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeProbeLimit)
	set.start(ctx)
	cancel()
	op, err := openPools(func(multi bool) (*sql.DB, error) {
		nc := &nodeConnector{set: set}
		for _, cfg := range cfgs {
			c := cfg.Clone()
			c.MultiStatements = multi
			conn, err := mysql.NewConnector(c)
			if err != nil {
				return nil, err
			}
			nc.nodes = append(nc.nodes, conn)
		}
		return wrap.open("mysql", nc), nil
	}, size, set.close)
	if err != nil {
		set.close()
		return opened{}, err
	}
	op.kind = func(ctx context.Context, db *sql.DB) (Kind, error) {
		k, err := mysqlKind(ctx, db)
		if err != nil {
			return k, err
		}
		if on, err := wsrepOn(ctx, db); err != nil || !on {
			return k, errors.Join(errors.New("a list of servers is for the nodes of a MariaDB Galera cluster, and the first ready one has wsrep off"), err)
		}
		return k, nil
	}
	return op, nil
}

// mysqlConfig is one server's DSN with what every pool needs.
func mysqlConfig(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql DSN: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Times go to the server as UTC to the microsecond, what a DATETIME(6)
	// column holds (ent/schema's datetime): a finer fraction would be
	// truncated by MariaDB but rounded by MySQL, even into the next second.
	if err := cfg.Apply(mysql.TimeTruncate(time.Microsecond)); err != nil {
		return nil, fmt.Errorf("mysql DSN: %w", err)
	}
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
	// Parsed again, as sql.Open would: the driver reads "charset" from the
	// text into the connection's charset, where a connector given this
	// Config would send it as a system variable.
	return mysql.ParseDSN(cfg.FormatDSN())
}

// openPools opens the main pool and the batch pool with open (multi:
// several statements per query); stop ends what the pools depend on.
func openPools(open func(multi bool) (*sql.DB, error), size pools, stop func()) (opened, error) {
	main, err := open(false)
	if err != nil {
		return opened{}, err
	}
	main.SetMaxOpenConns(size.main)
	main.SetMaxIdleConns(size.main)
	main.SetConnMaxLifetime(30 * time.Minute)
	// The group-commit batch sends its writes as one multi-statement query
	// (internal/checkout/batch_mysql.go), its values written inline by Text (plain
	// ASCII quoted, anything else as a hex literal: nothing to escape).
	// Only its own pool takes several statements per query, so no other
	// statement can carry a second one.
	batch, err := open(true)
	if err != nil {
		main.Close()
		return opened{}, err
	}
	// A few batches are in flight at once (checkout's GroupInFlight in each
	// lane): a small pool (DefaultBatchConns).
	batch.SetMaxOpenConns(size.batch)
	batch.SetMaxIdleConns(size.batch)
	batch.SetConnMaxLifetime(30 * time.Minute)
	return opened{db: main, batch: batch, dialect: mysqlDialect{}, kind: mysqlKind, stop: stop}, nil
}

// mysqlKind tells MariaDB from MySQL by its version.
func mysqlKind(ctx context.Context, db *sql.DB) (Kind, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading its version: %w", err)
	}
	if strings.Contains(strings.ToLower(v), "mariadb") {
		// A Galera node: its conflicts are retried more (wsrep_mysql.go).
		if on, err := wsrepOn(ctx, db); err == nil && on {
			galera.Store(true)
		}
		return MariaDB, nil
	}
	return MySQL, nil
}
