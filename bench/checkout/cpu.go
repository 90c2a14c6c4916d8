package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CPU per order, for the "where time goes" columns: this process (clients,
// handler, checkout) from getrusage, and the database server from /proc when
// it runs on this machine (mariadbd or mysqld; SQLite runs in this process).
// Per-order CPU is steadier than a rate on a shared, noisy machine: it moves
// with the work done, not with what else the cores are doing.

type cpuSample struct{ self, db time.Duration }

func sampleCPU() cpuSample {
	var ru syscall.Rusage
	var self time.Duration
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpuSample{self: self, db: procCPU(dbPID())}
}

// serverDB is false on SQLite: a MariaDB running on the machine meanwhile
// is not the benchmark's database.
var serverDB = true

var dbPID = sync.OnceValue(func() int {
	if !serverDB {
		return 0
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "mariadbd", "mysqld":
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
})

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
