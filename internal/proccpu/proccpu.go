// Package proccpu reads the CPU time processes have used, for the
// benchmarks' CPU-per-order columns: on a shared, noisy machine the CPU an
// order costs moves with the work done, not with what else the cores do,
// as a rate does.
package proccpu

import (
	"database/sql"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Self is this process's user + system time.
func Self() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Of is user + system time of pid (all its threads), at the kernel's
// USER_HZ of 100; 0 for pid 0 or a process gone.
func Of(pid int) time.Duration {
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

// MySQLServer is the process of the MySQL or MariaDB server behind db, by
// its pid_file: several servers may run on the machine (the Galera nodes
// beside the one on 3306), so the first mariadbd in /proc need not be it.
// 0 when it cannot be read (a remote server).
func MySQLServer(db *sql.DB) int {
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
