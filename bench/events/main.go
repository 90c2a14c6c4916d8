// Command events is issue 29's benchmark: placeOrder on the hot SKU (in
// process, the group-commit path, one unit per order) while the dispatcher
// hands the events to NATS JetStream and one webhook, against the same with
// the events going nowhere (a sink that drops them: today's log sink without
// its I/O), interleaved in one run (off, on, on, off). It also reports the
// events' lag from commit (placeOrder returned) to the broker's ack.
//
//	go run ./bench/events -db sqlite -nats nats://127.0.0.1:4222
//	go run ./bench/events -db 'mysql:root@tcp(127.0.0.1:3306)/test' -clients 16,64
//
// The webhook's receiver runs in this process by default (-receiver
// inproc); -receiver proc runs it in a process of its own (on the same
// cores: -receiver-nice 19 gives it only what the rest leaves), or
// -receiver URL names one running elsewhere (bench/events -serve-receiver
// ADDR there). The CPU columns say what each order cost this process, the
// MariaDB server and the receiver process, per mode.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"storefront/internal/platform/proccpu"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/events"
	"storefront/internal/platform/gctune"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/webhooks"
)

func main() {
	dbFlag := flag.String("db", "sqlite", "sqlite, or mysql:DSN (a database is created there and dropped)")
	natsURL := flag.String("nats", "nats://127.0.0.1:4222", "NATS JetStream server")
	dur := flag.Duration("dur", 4*time.Second, "measured time per mode and client count (two slices each)")
	clientsFlag := flag.String("clients", "16,64", "closed-loop clients")
	interval := flag.Duration("interval", time.Second, "the dispatcher's interval (serve's --outbox-interval)")
	flag.StringVar(&sinks, "sinks", "nats,webhook", "what the measured mode sends to: nats, webhook or both (nats,webhook)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.StringVar(&receiver, "receiver", "inproc", "the webhook's receiver: inproc (in this process), proc (this program in a process of its own, started here), or the URL of one already running (bench/events -serve-receiver ADDR)")
	flag.IntVar(&perWebhook, "per-webhook", 0, "the sender's attempts in flight per webhook (serve's default when 0)")
	flag.IntVar(&receiverNice, "receiver-nice", 0, "with -receiver proc: the receiver process's nice value (19: it runs on what checkout and the database leave idle)")
	serveAddr := flag.String("serve-receiver", "", "only be a receiver on this address (127.0.0.1:0: any port; its URL is printed first)")
	flag.Parse()
	if *serveAddr != "" {
		serveReceiver(*serveAddr)
		return
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	// serve's GC target: this process hosts the server's work.
	gc, from := gctune.Apply(gctune.DefaultPercent)
	gcNote = fmt.Sprintf("GC target %d (%s)", gc, from)
	var clients []int
	for _, s := range strings.Split(*clientsFlag, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			log.Fatalf("-clients %q", *clientsFlag)
		}
		clients = append(clients, n)
	}
	if err := run(*dbFlag, *natsURL, *dur, *interval, clients); err != nil {
		log.Print(err)
		return // the profile is still written
	}
}

var (
	sinks, gcNote, receiver  string
	receiverNice, perWebhook int
)

// placedAt is when each order's placeOrder returned, by order number.
var placedAt sync.Map

func run(dbSpec, natsURL string, dur, interval time.Duration, clients []int) error {
	ctx := context.Background()
	spec, cleanup, err := freshDatabase(dbSpec)
	if err != nil {
		return err
	}
	defer cleanup()
	db, err := store.Open(ctx, spec, store.WithDriverWrapper(func(d dialect.Driver) dialect.Driver { return countDriver{d} }))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	ids, err := demo.Seed(ctx, catalog.New(db, catalog.DefaultConfig()))
	if err != nil {
		return err
	}
	hot, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("黑色,L")).OnlyID(ctx)
	if err != nil {
		return err
	}
	if _, err := db.SQL.Exec("UPDATE sku SET stock = stock + 100000000, stock_version = stock_version + 1 WHERE id = ?", hot); err != nil {
		return err
	}
	svc := checkout.New(db, checkout.DefaultConfig())
	dispatcher := outbox.New(db, outbox.Config{})
	if db.Dialect.Name() == dialect.MySQL {
		dbPID = proccpu.MySQLServer(db.SQL)
	}

	if u, err := url.Parse(natsURL); err == nil && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost") {
		port, _ := strconv.Atoi(u.Port())
		natsPID = proccpu.Listening(port)
	}

	stream := fmt.Sprintf("BENCH_%d", time.Now().UnixNano())
	n, err := events.Connect(ctx, events.NATSConfig{URL: natsURL, Stream: stream, SubjectPrefix: "bench." + stream})
	if err != nil {
		return err
	}
	defer n.Close()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	defer js.DeleteStream(ctx, stream)

	recvURL, delivered, stopRecv, err := startReceiver(receiver)
	if err != nil {
		return err
	}
	defer stopRecv()
	hooks := webhooks.New(db, webhooks.Config{AllowPrivate: true, PerWebhook: perWebhook, EventTypes: checkout.EventTypes})
	if _, _, err := hooks.Create(ctx, recvURL, []string{checkout.EventOrderPlaced}, "bench"); err != nil {
		return err
	}

	var (
		mu   sync.Mutex
		lags []time.Duration
	)
	natsSink := n.Sink()
	timed := func(ctx context.Context, evs []outbox.Event) (int, error) {
		k, err := natsSink(ctx, evs)
		now := time.Now()
		mu.Lock()
		for _, e := range evs[:k] {
			// An order event's aggregate id is its orderSn: no JSON parse
			// here, so the measurement costs the measured mode little.
			if at, ok := placedAt.Load(e.Aggregate.ID); ok {
				lags = append(lags, now.Sub(at.(time.Time)))
			}
		}
		mu.Unlock()
		return k, err
	}
	off := func(_ context.Context, evs []outbox.Event) (int, error) { return len(evs), nil }
	// Each sink has its lane of the outbox, as in serve: the "off" mode
	// drops the events of both.
	offSinks := map[outbox.Lane]outbox.BatchSink{outbox.LaneBroker: off, outbox.LaneWebhooks: off}
	on := map[outbox.Lane]outbox.BatchSink{outbox.LaneBroker: off, outbox.LaneWebhooks: off}
	if strings.Contains(sinks, "nats") {
		on[outbox.LaneBroker] = timed
	}
	if strings.Contains(sinks, "webhook") {
		on[outbox.LaneWebhooks] = hooks.Sink()
	}

	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("events benchmark: %s, hot SKU, group-commit path, in process, %s per mode and client count, dispatcher every %s, %s, webhook receiver %s (nice %d), load average %s\n",
		db.Dialect.Name(), dur, interval, gcNote, receiver, receiverNice, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("   %-7s %-22s %9s %8s %8s %12s %12s %12s %12s %12s\n", "clients", "events", "orders/s", "p50 ms", "p99 ms", "go µs/ord", "db µs/ord", "nats µs/ord", "recv µs/ord", "machine µs")
	for _, c := range clients {
		var rate [2]float64
		var orders [2]int
		var lat [2][]time.Duration
		var cpu [2]cpuSample
		for _, mode := range []int{0, 1, 1, 0} {
			sink := offSinks
			if mode == 1 {
				sink = on
			}
			hctx, stopHooks := context.WithCancel(ctx)
			hdone := make(chan struct{})
			go func() { defer close(hdone); hooks.Run(hctx) }()
			if mode == 0 || !strings.Contains(sinks, "webhook") {
				stopHooks()
			}
			before := sampleCPU()
			k, l := slice(ctx, svc, dispatcher, hot, c, dur/2, interval, sink)
			stopHooks()
			<-hdone
			cpu[mode] = cpu[mode].add(sampleCPU().sub(before))
			orders[mode] += k
			lat[mode] = append(lat[mode], l...)
		}
		for mode, name := range []string{"none (dropped)", sinks} {
			rate[mode] = float64(orders[mode]) / dur.Seconds()
			per := func(d time.Duration) string {
				if d == 0 || orders[mode] == 0 {
					return "-"
				}
				return fmt.Sprintf("%.0f", float64(d.Microseconds())/float64(orders[mode]))
			}
			fmt.Printf("   %-7d %-22s %9.0f %8.2f %8.2f %12s %12s %12s %12s %12s\n", c, name, rate[mode], pct(lat[mode], 50), pct(lat[mode], 99),
				per(cpu[mode].self), per(cpu[mode].db), per(cpu[mode].nats), per(cpu[mode].recv), per(cpu[mode].machine))
		}
		fmt.Printf("   %-7d with/without: %.2f×\n", c, rate[1]/rate[0])
	}
	// Drain: every event of the "on" slices to the stream, then the lag.
	for _, lane := range outbox.Lanes {
		_, _ = dispatcher.DrainLane(ctx, lane, off, 500)
	}
	mu.Lock()
	fmt.Printf("\n   event lag, commit (placeOrder returned) → NATS ack, %d events: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		len(lags), pct(lags, 50), pct(lags, 99), pct(lags, 100))
	mu.Unlock()
	s, err := js.Stream(ctx, stream)
	if err == nil {
		info, _ := s.Info(ctx)
		fmt.Printf("   stream %s: %d messages; webhook requests answered: %d\n", stream, info.State.Msgs, delivered())
		fmt.Printf("   %s\n", &counted)
	}
	return nil
}

// slice runs c closed-loop clients for d with the dispatcher handing each
// lane's events to its sink every interval; it returns the orders placed
// and their latencies.
func slice(ctx context.Context, svc *checkout.Service, dispatcher *outbox.Dispatcher, item int64, c int, d, interval time.Duration, sinks map[outbox.Lane]outbox.BatchSink) (int, []time.Duration) {
	stop := make(chan struct{})
	dctx, cancel := context.WithCancel(ctx)
	var dwg sync.WaitGroup
	for lane, sink := range sinks {
		dwg.Go(func() {
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				_, _ = dispatcher.DrainLane(dctx, lane, sink, 500)
				select {
				case <-dctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	var (
		mu  sync.Mutex
		all []time.Duration
		wg  sync.WaitGroup
		seq atomic.Int64
	)
	time.AfterFunc(d, func() { close(stop) })
	for w := range c {
		wg.Go(func() {
			var mine []time.Duration
			for {
				select {
				case <-stop:
					mu.Lock()
					all = append(all, mine...)
					mu.Unlock()
					return
				default:
				}
				start := time.Now()
				o, err := svc.Place(ctx, checkout.PlaceInput{UserID: fmt.Sprint("bench-", w), IdempotencyKey: fmt.Sprint("k-", seq.Add(1), "-", start.UnixNano()),
					Items: []checkout.ItemInput{{ItemID: &item, Quantity: 1}}})
				if err != nil {
					log.Fatal(err)
				}
				now := time.Now()
				placedAt.Store(o.OrderSn, now)
				mine = append(mine, now.Sub(start))
			}
		})
	}
	wg.Wait()
	cancel()
	dwg.Wait()
	return len(all), all
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return float64(s[i]) / float64(time.Millisecond)
}

func freshDatabase(spec string) (string, func(), error) {
	if spec == "sqlite" {
		dir, err := os.MkdirTemp("", "sfbench-events")
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "bench.db"), func() { os.RemoveAll(dir) }, nil
	}
	dsn, ok := strings.CutPrefix(spec, "mysql:")
	if !ok {
		return "", nil, fmt.Errorf("-db %q: want sqlite or mysql:DSN", spec)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", nil, err
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("sfbench_events_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		return "", nil, err
	}
	cfg.DBName = name
	return "mysql:" + cfg.FormatDSN(), func() { _, _ = admin.Exec("DROP DATABASE " + name); admin.Close() }, nil
}
