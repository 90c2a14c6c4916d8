// Command count runs a fixed checkout workload in process on MariaDB, for
// counting what an order costs rather than timing it (docs/benchmarks.md,
// "Counting instructions"): on a shared machine a rate swings with whatever
// else runs, an instruction count or a CPU time per order does not.
//
//	count -workload plain|group [-n 2000] [-batch 32] [-warm 256] [-db mysql:DSN]
//
// It builds the service as bench/checkout does (app.New on a fresh database
// with the demo catalog), places -warm orders of the hot SKU, prints "ready"
// and waits for a line on stdin, places -n orders, prints "done …" and waits
// for another line before it exits. scripts/callgrind.sh runs it under
// callgrind and switches the instrumentation on and off at those two lines,
// so the count is the -n orders' alone. The plain workload places one order
// after another on the plain path; the group workload places them as
// batches of exactly -batch orders (checkout.PlaceBatch), so a batch's size
// does not depend on how fast the machine is.
//
// With -dbcpu R it runs natively instead, R rounds of -n orders, and prints
// the database server's CPU per order of each round (dbcpu.go).
//
// MariaDB, not SQLite: callgrind counts the Go process, and SQLite (modernc)
// would run the database's work inside it; on a server the service's share
// and the database's are counted apart, and the group path is the servers'.
// This file and orders.go use only APIs that exist at 3011f1b too, so that
// scripts/callgrind.sh can copy the command into a tree of that commit.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"storefront/internal/platform/gctune"
)

func main() {
	workload := flag.String("workload", "plain", "plain (one order after another on the plain path) or group (batches of exactly -batch orders)")
	n := flag.Int("n", 2000, "orders measured (a multiple of -batch for group)")
	batch := flag.Int("batch", 32, "group: orders per batch")
	warm := flag.Int("warm", 256, "orders placed before the measured ones (caches, connections, prepared state)")
	dbFlag := flag.String("db", "mysql:root@tcp(127.0.0.1:3306)/test", "mysql:DSN of the server; a database is created there and dropped afterwards")
	dbcpu := flag.Int("dbcpu", 0, "run natively R rounds of -n orders and print the database's CPU per order (0: the callgrind gate)")
	flag.Parse()
	// serve's GC target: the collector's share of an order is the
	// binary's, and at Go's default it was a third of the group path's
	// count and the part that moved most from run to run.
	gctune.Apply(gctune.DefaultPercent)
	if *workload != "plain" && *workload != "group" {
		log.Fatalf("-workload %q: want plain or group", *workload)
	}
	if *workload == "group" && (*n%*batch != 0 || *warm%*batch != 0) {
		log.Fatalf("-n %d and -warm %d must be multiples of -batch %d", *n, *warm, *batch)
	}
	ctx := context.Background()
	w, err := newOrders(ctx, *dbFlag, *workload == "group", *batch)
	if err != nil {
		log.Fatal(err)
	}
	defer w.close()
	if err := w.place(ctx, *warm); err != nil {
		log.Fatal(err)
	}
	if *dbcpu > 0 {
		if err := w.dbCPU(ctx, *dbcpu, *n); err != nil {
			w.close()
			log.Fatal(err)
		}
		return
	}
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		log.Fatal(err)
	}
	b0, o0 := w.svc.GroupStats()
	began := time.Now()
	if err := w.place(ctx, *n); err != nil {
		w.close()
		log.Fatal(err)
	}
	b1, o1 := w.svc.GroupStats()
	fmt.Printf("done: %d orders (%s), group path %d batches of %d orders, %s\n", *n, *workload, b1-b0, o1-o0, time.Since(began).Round(time.Millisecond))
	_, _ = in.ReadString('\n')
}
