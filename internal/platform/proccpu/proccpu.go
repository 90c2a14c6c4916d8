// Package proccpu reads the CPU time processes have used, for the
// benchmarks' CPU-per-order columns: on a shared, noisy machine the CPU an
// order costs moves with the work done, not with what else the cores do,
// as a rate does.
package proccpu

import (
	"database/sql"
	"fmt"
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

// PostgresServerHere says whether the PostgreSQL server behind db runs on
// this machine (its postmaster.pid names a postgres process here), so that
// Named("postgres") is its CPU: its backends are a process per connection.
func PostgresServerHere(db *sql.DB) bool {
	var dir string
	if db.QueryRow("SHOW data_directory").Scan(&dir) != nil {
		return false
	}
	b, err := os.ReadFile(dir + "/postmaster.pid")
	if err != nil {
		return false
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	comm, err := os.ReadFile("/proc/" + strings.TrimSpace(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "postgres"
}

// Machine is the CPU time all cores spent busy (user, nice, system, irq,
// softirq, steal from /proc/stat), at USER_HZ: what a budget per order
// adds up to when the service, the database, the broker and a receiver
// share the cores.
func Machine() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var t int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		t += v
	}
	return time.Duration(t) * 10 * time.Millisecond
}

// Listening is the process holding the TCP socket that listens on port
// (IPv4 or IPv6), from /proc/net and the processes' descriptors; 0 when
// none is found (a remote server, or one this user cannot see).
func Listening(port int) int {
	inode := ""
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(table)
		for _, l := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(l)
			// local_address is ADDR:PORT in hex; state 0A is LISTEN.
			if len(f) > 9 && f[3] == "0A" && strings.HasSuffix(f[1], suffix) {
				inode = f[9]
				break
			}
		}
		if inode != "" {
			break
		}
	}
	if inode == "" {
		return 0
	}
	want := "socket:[" + inode + "]"
	for _, pid := range pids() {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if l, _ := os.Readlink(dir + fd.Name()); l == want {
				return pid
			}
		}
	}
	return 0
}

// Named is the CPU time of every process whose command name is comm: the
// PostgreSQL server is a process per connection plus its workers, all
// named postgres. A process that exited between two readings takes its
// time with it, so it suits a benchmark whose connections stay open.
func Named(comm string) time.Duration {
	var t time.Duration
	for _, pid := range pids() {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && strings.TrimSpace(string(b)) == comm {
			t += Of(pid)
		}
	}
	return t
}

// pids are the processes in /proc.
func pids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
