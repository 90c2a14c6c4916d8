package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"storefront/internal/platform/proccpu"
)

// dbCPU places rounds of n orders and prints the database server's CPU per
// order of each round and their median, two ways:
//
//   - the threads serving this process's connections (every connection to
//     the workload's database in information_schema.PROCESSLIST, by its
//     TID; MariaDB runs a thread per connection), their run time from
//     /proc/PID/task/TID/schedstat in nanoseconds: other clients of a
//     shared server do not count, nor do InnoDB's background threads;
//   - the whole mariadbd, utime+stime from /proc/PID/stat (10 ms ticks):
//     background threads included, and whatever else the server runs.
func (w *orders) dbCPU(ctx context.Context, rounds, n int) error {
	pid := proccpu.MySQLServer(w.db.SQL)
	if pid == 0 {
		return fmt.Errorf("the server's pid is not readable here: run it on the database's machine")
	}
	var conn, whole []float64
	for r := range rounds {
		tids0, err := w.threads(ctx)
		if err != nil {
			return err
		}
		t0, p0, began := runTime(pid, tids0), proccpu.Of(pid), time.Now()
		if err := w.place(ctx, n); err != nil {
			return err
		}
		t1, p1, took := runTime(pid, tids0), proccpu.Of(pid), time.Since(began)
		tids1, err := w.threads(ctx)
		if err != nil {
			return err
		}
		note := ""
		if !slices.Equal(tids0, tids1) {
			note = fmt.Sprintf(" (the connections changed: threads %v, then %v; only the first counted)", tids0, tids1)
		}
		c := float64((t1 - t0).Nanoseconds()) / 1000 / float64(n)
		p := float64((p1 - p0).Nanoseconds()) / 1000 / float64(n)
		conn, whole = append(conn, c), append(whole, p)
		fmt.Printf("round %d: %d orders in %s: connection threads %.1f µs/order, mariadbd %.1f µs/order%s\n", r+1, n, took.Round(time.Millisecond), c, p, note)
	}
	fmt.Printf("median of %d: connection threads %.1f µs/order, mariadbd %.1f µs/order\n", rounds, median(conn), median(whole))
	return nil
}

// threads lists the TIDs serving connections to the workload's database.
func (w *orders) threads(ctx context.Context) ([]string, error) {
	rows, err := w.db.SQL.QueryContext(ctx, "SELECT TID FROM information_schema.PROCESSLIST WHERE DB = ? ORDER BY TID", w.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tids []string
	for rows.Next() {
		var tid string
		if err := rows.Scan(&tid); err != nil {
			return nil, err
		}
		tids = append(tids, tid)
	}
	return tids, rows.Err()
}

// runTime sums the threads' time on a CPU (schedstat's first field).
func runTime(pid int, tids []string) time.Duration {
	var sum time.Duration
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, tid))
		if err != nil {
			continue
		}
		ns, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
