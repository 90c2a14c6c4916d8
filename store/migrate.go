package store

import (
	"context"
	"fmt"
)

// Migrate creates or upgrades the schema. It never drops anything, so an
// older binary's migrate against a newer schema is harmless too
// (docs/operations.md, "Migrations").
//
// Data steps that a new column needs run here, after ent's step, each once:
// whether it is due is read from the schema before ent changes it.
func (d *DB) Migrate(ctx context.Context) error {
	// sku.stock_version (issue 26) splits the SKU's one version into the
	// terms' and the stock's. Before it, every stock movement and every
	// terms edit moved sku.version; an admin may hold a version read from
	// an older binary for either form, so both versions start at it.
	splitVersions, err := d.lacksColumn(ctx, "sku", "stock_version")
	if err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	if err := d.Client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	if splitVersions {
		if _, err := d.SQL.ExecContext(ctx, "UPDATE sku SET stock_version = version"); err != nil {
			return fmt.Errorf("migrating schema: starting sku.stock_version at sku.version: %w", err)
		}
	}
	return nil
}

// lacksColumn reports whether table exists without column (false for a
// database without the table: ent creates it whole).
func (d *DB) lacksColumn(ctx context.Context, table, column string) (bool, error) {
	var tables, columns int
	q := columnsSQLite
	if d.Kind != SQLite {
		q = columnsMySQL
	}
	if err := d.SQL.QueryRowContext(ctx, q, table, table, column).Scan(&tables, &columns); err != nil {
		return false, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	return tables > 0 && columns == 0, nil
}
