package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// PostgresLockSQL is the statement that takes the advisory locks of keys
// (ascending) of space, transaction-scoped: for Lock, and for the
// group-commit batch's one query. A key is the space in the top 16 bits of
// the lock's 64 and the id below (ids stay below 2^47).
func PostgresLockSQL(space LockSpace, mode LockMode, keys []int64) string {
	fn := "pg_advisory_xact_lock_shared("
	if mode == Exclusive {
		fn = "pg_advisory_xact_lock("
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(fn)
		b.WriteString(strconv.FormatInt(int64(space)<<48|k, 10))
		b.WriteByte(')')
	}
	return b.String()
}

func (postgresDialect) lock(ctx context.Context, e Execer, space LockSpace, mode LockMode, keys []int64) error {
	if _, err := e.ExecContext(ctx, PostgresLockSQL(space, mode, keys)); err != nil {
		return fmt.Errorf("locking %v of space %d: %w", keys, space, err)
	}
	return nil
}
