package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"time"

	"storefront/internal/proccpu"
)

// CPU per order, for the "where time goes" columns: this process (clients,
// handler, checkout), and the database server when it runs on this machine
// (MariaDB or MySQL, by its pid_file; PostgreSQL, every process named
// postgres; SQLite runs in this process).

type cpuSample struct{ self, db time.Duration }

func sampleCPU() cpuSample {
	db := proccpu.Of(dbPID)
	if postgresCPU {
		db = proccpu.Named("postgres")
	}
	return cpuSample{self: proccpu.Self(), db: db}
}

// dbPID is the benchmark's MySQL or MariaDB server; 0 on SQLite and
// PostgreSQL. postgresCPU: the database is a PostgreSQL server on this
// machine, whose backends are many processes.
var (
	dbPID       int
	postgresCPU bool
)

// localPostgres says whether the PostgreSQL server behind db runs on this
// machine: its postmaster's pid, as the server reports it, is a postgres
// process here.
func localPostgres(db *sql.DB) bool {
	var dir string
	if db.QueryRow("SHOW data_directory").Scan(&dir) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return false
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	comm, err := os.ReadFile("/proc/" + strings.TrimSpace(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "postgres"
}
