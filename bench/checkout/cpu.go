package main

import (
	"time"

	"storefront/internal/proccpu"
)

// CPU per order, for the "where time goes" columns: this process (clients,
// handler, checkout), and the database server when it runs on this machine
// (MariaDB or MySQL, by its pid_file; SQLite runs in this process).

type cpuSample struct{ self, db time.Duration }

func sampleCPU() cpuSample {
	return cpuSample{self: proccpu.Self(), db: proccpu.Of(dbPID)}
}

// dbPID is the benchmark's database server; 0 on SQLite and PostgreSQL
// (its backends are many processes).
var dbPID int
