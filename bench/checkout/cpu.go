package main

import (
	"time"

	"storefront/internal/platform/proccpu"
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
