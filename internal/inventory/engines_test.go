package inventory

import "storefront/internal/platform/store"

// engineOf is the batch engine of the database kind, nil for one that
// writes batches statement by statement (SQLite: WriteLocked). Production
// code picks its engine with its batch writer (checkout's).
func engineOf(kind store.Kind) BatchEngine {
	switch kind {
	case store.MariaDB:
		return MySQLBatch{Compound: true}
	case store.MySQL:
		return MySQLBatch{}
	case store.Postgres:
		return PostgresBatch{}
	}
	return nil
}
