package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"modernc.org/sqlite" // pure-Go SQLite: the default needs no C compiler
)

func openSQLite(path string, wrap ConnectorWrapper) (opened, error) {
	if dir := filepath.Dir(path); dir != "." && path != ":memory:" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return opened{}, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	// IMMEDIATE transactions take the write lock at BEGIN, so two writers queue
	// on the busy timeout instead of both reading and then one failing to
	// upgrade its lock (SQLITE_BUSY mid-transaction cannot be waited out).
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	var db *sql.DB
	if wrap == nil {
		var err error
		if db, err = sql.Open("sqlite", dsn); err != nil {
			return opened{}, err
		}
	} else {
		db = wrap.open("sqlite", dsnConnector{&sqlite.Driver{}, dsn})
	}
	// SQLite has one writer at a time; a small pool avoids a crowd of
	// connections spinning in the busy handler.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	return opened{db: db, dialect: sqliteDialect{}, kind: func(context.Context, *sql.DB) (Kind, error) { return SQLite, nil }}, nil
}
