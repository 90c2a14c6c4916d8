package checkout

import (
	"context"

	"storefront/internal/platform/store"
)

// batcher is one database's way of running a group-commit batch: how
// batches take turns, whether a lone order takes the plain path, and one
// attempt at a batch's transaction (read, decide, write, commit). The
// decision itself (decideBatch, decide) is shared; a dialect's tricks stay
// inside its batcher.
type batcher interface {
	// hold serializes batches (of lane) where the database needs it and
	// returns the release.
	hold(lane int) func()
	// lone reports whether a lone order should take the plain path now,
	// holding what a batch would hold, and returns its release.
	lone(lane int) (release func(), ok bool)
	// attempt runs the batch once; errKeysExist, errStockMoved and a
	// transient conflict make runBatch run it again (rerun).
	attempt(ctx context.Context, s *Service, batch []*ticket, out []verdict, r rerun) error
	// refusedData reports an error the database answered for what the
	// batch's orders hold (a value a column refuses, a constraint on one
	// row), as opposed to one of the batch as a whole (see memberFault).
	refusedData(err error) bool
}

// newBatcher picks the batcher for the database's kind: the one place
// checkout looks at it. The servers share serverBatcher and differ in its
// writer (batch_mysql.go, batch_postgres.go). inFlight is the
// main lane's batches in flight (GroupInFlight): on SQLite a pool batch
// lets that many go first.
func newBatcher(db *store.DB, inFlight int) batcher {
	switch db.Kind {
	case store.MariaDB:
		return &serverBatcher{lastRead: newLastRead(), w: &mysqlWriter{compound: true}}
	case store.MySQL:
		return &serverBatcher{lastRead: newLastRead(), w: &mysqlWriter{}}
	case store.Postgres:
		return &serverBatcher{lastRead: newLastRead(), w: &postgresWriter{}}
	default:
		return &sqliteBatcher{writer: writer{burst: inFlight}}
	}
}
