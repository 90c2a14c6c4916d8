package main

import (
	"database/sql"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU per order by mode: this process from getrusage, the database server
// and a receiver process from /proc. On a shared, noisy machine the CPU an
// order costs moves with the work done, not with what else the cores do,
// as orders/s does.

type cpuSample struct{ self, db, recv time.Duration }

// dbPID is the MariaDB server's process, found by its pid_file (several
// servers may run on the machine: the first mariadbd in /proc need not be
// the benchmark's); 0 when unknown (SQLite, a remote server).
var dbPID, recvPID int

func findDBPID(db *sql.DB) int {
	var path string
	if err := db.QueryRow("SELECT @@pid_file").Scan(&path); err != nil {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func sampleCPU() cpuSample {
	var ru syscall.Rusage
	var self time.Duration
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpuSample{self: self, db: procCPU(dbPID), recv: procCPU(recvPID)}
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	return cpuSample{self: a.self - b.self, db: a.db - b.db, recv: a.recv - b.recv}
}

func (a cpuSample) add(b cpuSample) cpuSample {
	return cpuSample{self: a.self + b.self, db: a.db + b.db, recv: a.recv + b.recv}
}

// procCPU is user + system time of pid, at the kernel's USER_HZ of 100.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
