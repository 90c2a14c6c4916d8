//go:build fault

package e2e

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// placedIDs waits until the stream holds an OrderPlaced for every order of
// seen, then checks that each order's OrderPlaced is there exactly once,
// and returns the event id of each.
func placedIDs(t *testing.T, ns *eventStream, seen []string) map[string]string {
	t.Helper()
	var evs []storedEvent
	missing := 0
	wait.Within(t, "every acknowledged order's OrderPlaced in the stream", 90*time.Second, func() bool {
		if ns.count(t) < len(seen) {
			return false
		}
		evs = ns.all(t)
		have := map[string]bool{}
		for _, e := range evs {
			if e.CE.Type == "OrderPlaced" {
				have[e.OrderSn] = true
			}
		}
		missing = 0
		for _, sn := range seen {
			if !have[sn] {
				missing++
			}
		}
		return missing == 0
	})
	ids := map[string]string{}
	times := map[string]int{}
	for _, e := range evs {
		if e.CE.Type == "OrderPlaced" {
			ids[e.OrderSn] = e.CE.ID
			times[e.OrderSn]++
		}
	}
	for sn, n := range times {
		if n != 1 {
			t.Errorf("OrderPlaced of %s: %d messages, want 1", sn, n)
		}
	}
	return ids
}

// kill -9 of serve while it dispatches under load, then a restart on the
// same database: every order a client was told exists has its OrderPlaced
// in the stream exactly once, and it reached the webhook at least once.
func TestFaultKillWhileDispatching(t *testing.T) {
	url := natsURL(t)
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			ns := newEventStream(t, url)
			rec := newReceiver(t)
			// The restart keeps the instance's id, as a restart on the same
			// host and address does by default: it takes back what the dead
			// process had claimed at once. A restart under another id waits
			// out the leases instead (outbox lane 1 min, then the webhook
			// attempt's 30 s), which the claim tests cover without a kill.
			args := append(ns.args(url), "--webhook-allow-private", "--webhook-retry", "200ms,200ms,200ms,1s,1s,1s", "--outbox-interval", "50ms",
				"--instance-id", "kill-while-dispatching-"+string(b))
			s := Start(t, spec, args...)
			rec.subscribe(t, s, "OrderPlaced")
			id := setStockTo(t, s, "黑色,L", 100000)
			stop := make(chan struct{})
			o, wg := load(t, s.URL, id, 16, stop)
			wait.Within(t, "200 orders and some events out before the kill", 60*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				return len(orders) >= 200 && ns.count(t) > 0
			})
			kill9(t, s)
			close(stop)
			wg.Wait()
			seen, codes, _ := o.snapshot()
			t.Logf("before and at the kill: %d orders acknowledged, outcomes %v, %d events in the stream", len(seen), codes, ns.count(t))

			s2 := Start(t, spec, args...)
			_ = s2
			ids := placedIDs(t, ns, seen)
			wait.Within(t, "every acknowledged order's OrderPlaced at the webhook", 90*time.Second, func() bool {
				got, _, _, _ := rec.snapshot()
				for _, sn := range seen {
					if got[ids[sn]] == 0 {
						return false
					}
				}
				return true
			})
			_, _, bad, _ := rec.snapshot()
			for _, b := range bad {
				t.Error(b)
			}
		})
	}
}

// natsServer is a nats-server of the test's own, on a port and store of
// its own, so that stopping it leaves the shared one alone.
type natsServer struct {
	addr, dir string
	cmd       *exec.Cmd
}

func startNATS(t *testing.T, addr, dir string) *natsServer {
	t.Helper()
	bin := "/usr/sbin/nats-server"
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("nats-server"); err == nil {
			bin = p
		} else {
			t.Fatalf("nats-server not found (apt-get install nats-server)")
		}
	}
	host, port, _ := net.SplitHostPort(addr)
	n := &natsServer{addr: addr, dir: dir, cmd: exec.Command(bin, "-a", host, "-p", port, "-js", "-sd", dir)}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.stop() })
	wait.Within(t, "nats-server listening on "+addr, 20*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return n
}

func (n *natsServer) stop() {
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	_ = n.cmd.Wait()
}

// metric reads one unlabelled value from s's /metrics.
func metric(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// NATS stopped for 5 s under load: no order fails (checkout does not wait
// for the broker), the events wait in the outbox (counted on /metrics),
// and every acknowledged order's OrderPlaced is in the stream once NATS is
// back.
func TestFaultNATSStoppedUnderLoad(t *testing.T) {
	natsURL(t) // the same switch as the other NATS tests
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			addr, dir := freeAddr(t), t.TempDir()
			n := startNATS(t, addr, dir)
			url := "nats://" + addr
			ns := newEventStream(t, url)
			s := Start(t, spec, append(ns.args(url), "--outbox-interval", "100ms")...)
			id := setStockTo(t, s, "黑色,L", 100000)
			stop := make(chan struct{})
			o, wg := load(t, s.URL, id, 8, stop)
			wait.Within(t, "50 orders and their events flowing", 60*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				return len(orders) >= 50 && ns.count(t) > 0
			})
			n.stop()
			down := time.Now()
			before, _, _ := o.snapshot()
			wait.Within(t, "events waiting in the outbox (/metrics)", 30*time.Second, func() bool {
				return metric(t, s, "storefront_outbox_pending_events") > 0
			})
			// The outage itself: five seconds of load without a broker.
			time.Sleep(time.Until(down.Add(5 * time.Second)))
			during, _, _ := o.snapshot()
			age := metric(t, s, "storefront_outbox_oldest_pending_age_seconds")
			n = startNATS(t, addr, dir)
			wait.Within(t, "50 more orders after NATS returned", 60*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				return len(orders) >= len(during)+50
			})
			close(stop)
			wg.Wait()
			seen, codes, slowest := o.snapshot()
			t.Logf("%d orders (%d while NATS was down), outcomes %v, slowest %v; oldest pending event %.1f s old at the end of the outage",
				len(seen), len(during)-len(before), codes, slowest, age)
			for code, k := range codes {
				if code != "" {
					t.Errorf("a client got %q (%d times)", code, k)
				}
			}
			if age < 2 {
				t.Errorf("oldest pending event %.1f s old after 5 s without NATS: the gauge is not kept up during the outage", age)
			}
			if len(during) == len(before) {
				t.Error("no order was placed while NATS was down")
			}
			placedIDs(t, ns, seen)
			wait.Within(t, "the outbox drained (/metrics)", 30*time.Second, func() bool {
				return metric(t, s, "storefront_outbox_pending_events") == 0
			})
		})
	}
}
