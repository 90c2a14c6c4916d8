//go:build fault

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// kill9 kills the server without any chance to drain or roll back, and
// reaps it so the harness's cleanup finds it stopped.
func kill9(t *testing.T, s *Server) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
}

// outcomes records what clients saw: orders they were told exist, and
// every error code (or transport failure) with the longest wait.
type outcomes struct {
	mu      sync.Mutex
	orders  []string
	codes   map[string]int
	slowest time.Duration
}

func (o *outcomes) add(sn, code string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.codes == nil {
		o.codes = map[string]int{}
	}
	if sn != "" {
		o.orders = append(o.orders, sn)
	}
	o.codes[code]++
	o.slowest = max(o.slowest, took)
}

func (o *outcomes) snapshot() (orders []string, codes map[string]int, slowest time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := map[string]int{}
	for k, v := range o.codes {
		c[k] = v
	}
	return append([]string(nil), o.orders...), c, o.slowest
}

// load places single-unit orders of item id from workers goroutines until
// stop is closed; code "" is a success, "transport" a failed connection.
func load(t *testing.T, url, id string, workers int, stop <-chan struct{}) (*outcomes, *sync.WaitGroup) {
	tokens := make([]string, workers)
	for w := range tokens {
		tokens[w] = tokenFor(t, fmt.Sprintf("load-%d", w), auth.Customer)
	}
	return hammer(workers, stop, func(w, i int) (*Response, error) {
		r, _, err := post(context.Background(), url, tokens[w], fmt.Sprintf("load-%d-%d", w, i), placeOrder,
			map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
		return r, err
	})
}

// readLoad sends a read that always reaches the database (the goods page
// query; product views may come from the cache).
func readLoad(url string, workers int, stop <-chan struct{}) (*outcomes, *sync.WaitGroup) {
	return hammer(workers, stop, func(w, i int) (*Response, error) {
		r, _, err := post(context.Background(), url, "", "", `{ goodsList(first: 3) { edges { node { id } } } }`, nil)
		return r, err
	})
}

// hammer runs do from workers goroutines until stop is closed, recording
// each outcome and how long it took.
func hammer(workers int, stop <-chan struct{}, do func(w, i int) (*Response, error)) (*outcomes, *sync.WaitGroup) {
	o := &outcomes{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				r, err := do(w, i)
				took := time.Since(start)
				var p struct{ PlaceOrder struct{ OrderSn string } }
				switch {
				case err != nil:
					o.add("", "transport", took)
					time.Sleep(20 * time.Millisecond) // a dead server refuses at once; do not spin
				case len(r.Errors) > 0:
					o.add("", r.Code(), took)
					time.Sleep(20 * time.Millisecond) // as a client backs off on UNAVAILABLE
				case decodeInto(r, &p) == nil:
					o.add(p.PlaceOrder.OrderSn, "", took)
				default:
					o.add("", "undecodable", took)
				}
			}
		}()
	}
	return o, &wg
}

// checkDurable asserts what a crash or an outage must not break: every
// order a client saw succeed exists, every order has its deduct rows for
// all its units, and stock equals the ledger everywhere.
func checkDurable(t *testing.T, spec string, seen []string) {
	t.Helper()
	db, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	missing := 0
	for _, sn := range seen {
		var n int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM orders WHERE order_sn = ?", sn).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d orders that clients saw succeed are not in the database", missing, len(seen))
	}
	// Units ordered per order against the units its deduct rows took.
	unbacked := dbInt(t, db, `SELECT COUNT(*) FROM orders o
	  WHERE (SELECT COALESCE(SUM(l.quantity), 0) FROM order_line l WHERE l.order_id = o.id)
	     <> (SELECT COALESCE(-SUM(s.change_num), 0) FROM stock_log s WHERE s.biz_sn = o.order_sn AND s.change_type = 1)`)
	if unbacked > 0 {
		t.Errorf("%d orders without matching ledger rows", unbacked)
	}
	if n := dbInt(t, db, "SELECT COUNT(*) FROM orders"); n < len(seen) {
		t.Errorf("%d orders in the database, fewer than the %d clients saw", n, len(seen))
	}
	if out, clean := reconcileCLI(t, spec); !clean {
		t.Errorf("storefront reconcile:\n%s", out)
	}
}

func decodeInto(r *Response, v any) error {
	return jsonUnmarshal(r.Data, v)
}

// mariadb controls the local server the MariaDB tests use.
func mariadbUp() bool {
	return exec.Command("mysqladmin", "-uroot", "-h127.0.0.1", "--connect-timeout=2", "ping").Run() == nil
}

func startMariaDB(t *testing.T) {
	t.Helper()
	if mariadbUp() {
		return
	}
	if out, err := exec.Command("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd").CombinedOutput(); err != nil {
		t.Errorf("starting mariadbd: %v\n%s", err, out)
	}
	for i := 0; i < 120 && !mariadbUp(); i++ {
		time.Sleep(500 * time.Millisecond)
	}
	if !mariadbUp() {
		t.Errorf("MariaDB did not come back within 60 s")
	}
}

// freezeMariaDB stops the server process without closing its sockets:
// connections open, statements never answer. Only a deadline ends them.
func freezeMariaDB(t *testing.T) (thaw func()) {
	t.Helper()
	out, err := exec.Command("pidof", "mariadbd").Output()
	pid, convErr := strconv.Atoi(strings.Fields(string(out) + " x")[0])
	if err != nil || convErr != nil {
		t.Fatalf("pidof mariadbd: %q %v %v", out, err, convErr)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
}

func stopMariaDB(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("mysqladmin", "-uroot", "-h127.0.0.1", "shutdown").CombinedOutput(); err != nil {
		t.Fatalf("mysqladmin shutdown: %v\n%s", err, out)
	}
	for i := 0; i < 120 && mariadbUp(); i++ {
		time.Sleep(250 * time.Millisecond)
	}
	if mariadbUp() {
		t.Fatal("MariaDB still answers 30 s after shutdown")
	}
}
