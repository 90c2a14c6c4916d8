package store

import (
	"context"
	"fmt"
)

// Migrate creates or upgrades the schema. It never drops anything, so an
// older binary's migrate against a newer schema is harmless too
// (docs/operations.md, "Migrations").
//
// Data steps that a new column needs run here, after ent's step. Each is
// written to be safe to run again on every migrate, by any number of
// instances at once: ent's ALTER TABLE commits on its own on MySQL, so a
// process that dies after it must find the step still due, and a step must
// never move a value back.
func (d *DB) Migrate(ctx context.Context) error {
	if err := d.Client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	// sku.stock_version (issue 26) splits the SKU's one version into the
	// terms' and the stock's. Before it, every stock movement and every
	// terms edit moved sku.version; an admin may hold a version read from
	// an older binary for either form, so both versions start at it. The
	// column is added with DEFAULT 0 and every SKU made since starts at 1,
	// so 0 means "not copied yet" and the copy matches nothing once done.
	if _, err := d.SQL.ExecContext(ctx, "UPDATE sku SET stock_version = version WHERE stock_version = 0"); err != nil {
		return fmt.Errorf("migrating schema: starting sku.stock_version at sku.version: %w", err)
	}
	return nil
}
