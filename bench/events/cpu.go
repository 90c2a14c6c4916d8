package main

import (
	"time"

	"storefront/internal/platform/proccpu"
)

// CPU per order by mode: this process from getrusage, the database server,
// the NATS server and a receiver process from /proc, and every core's busy
// time (the machine's: what the with/without ratio is bound by when the
// cores are saturated). On a shared, noisy machine the CPU an
// order costs moves with the work done, not with what else the cores do,
// as orders/s does.

type cpuSample struct{ self, db, recv, nats, machine time.Duration }

// dbPID is the MariaDB server's process (proccpu.MySQLServer); 0 when
// unknown (SQLite, a remote server).
var dbPID, recvPID, natsPID int

func sampleCPU() cpuSample {
	return cpuSample{self: proccpu.Self(), db: proccpu.Of(dbPID), recv: proccpu.Of(recvPID), nats: proccpu.Of(natsPID), machine: proccpu.Machine()}
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	return cpuSample{self: a.self - b.self, db: a.db - b.db, recv: a.recv - b.recv, nats: a.nats - b.nats, machine: a.machine - b.machine}
}

func (a cpuSample) add(b cpuSample) cpuSample {
	return cpuSample{self: a.self + b.self, db: a.db + b.db, recv: a.recv + b.recv, nats: a.nats + b.nats, machine: a.machine + b.machine}
}
