//go:build fault

package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// MariaDB stopped for a few seconds under load, then started again:
// clients get UNAVAILABLE within the request timeout (no hang, no
// INTERNAL, no crash), /readyz says 503, and the service recovers by
// itself. MariaDB is restarted in a cleanup whatever happens.
func TestFaultDatabaseOutage(t *testing.T) {
	spec := testdb.Spec(t, testdb.MySQL)
	const requestTimeout = 3 * time.Second
	s := Start(t, spec, "--request-timeout", requestTimeout.String())
	id := setStockTo(t, s, "黑色,L", 100000)
	t.Cleanup(func() { startMariaDB(t) })

	stop := make(chan struct{})
	o, wg := load(t, s.URL, id, 8, stop)
	wait.Within(t, "20 orders before the outage", 30*time.Second, func() bool {
		orders, _, _ := o.snapshot()
		return len(orders) >= 20
	})
	before, _, _ := o.snapshot()

	stopMariaDB(t)
	down := time.Now()
	wait.Within(t, "UNAVAILABLE answers during the outage", 15*time.Second, func() bool {
		_, codes, _ := o.snapshot()
		return codes["UNAVAILABLE"] >= 5
	})
	if code := readyz(t, s); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database down: %d, want 503", code)
	}
	if r, _, err := post(context.Background(), s.URL, "", "", `{ goodsList(first: 3) { edges { node { id } } } }`, nil); err != nil || r.Code() != "UNAVAILABLE" {
		t.Errorf("goodsList with the database down: %v %+v", err, r)
	}
	time.Sleep(time.Until(down.Add(3 * time.Second))) // a few seconds down in all
	startMariaDB(t)

	// Recovery on its own: the same process answers again, without a restart.
	wait.Within(t, "orders succeeding again", 30*time.Second, func() bool {
		orders, _, _ := o.snapshot()
		return len(orders) >= len(before)+20
	})
	close(stop)
	wg.Wait()
	if code := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz after the database came back: %d", code)
	}
	seen, codes, slowest := o.snapshot()
	t.Logf("outcomes across the outage: %v; %d orders; slowest answer %v", codes, len(seen), slowest.Round(time.Millisecond))
	for code, n := range codes {
		if code != "" && code != "UNAVAILABLE" {
			t.Errorf("a client got %q %d times; want only successes and UNAVAILABLE", code, n)
		}
	}
	// Bounded by the request timeout, plus the server's own margin.
	if slowest > requestTimeout+2*time.Second {
		t.Errorf("slowest answer %v with a request timeout of %v: something waited past its deadline", slowest, requestTimeout)
	}
	if v := metricValue(t, s, `storefront_graphql_errors_total{code="UNAVAILABLE",operation="placeOrder"}`); v == "" || v == "0" {
		t.Errorf("UNAVAILABLE errors not counted on /metrics (%q)", v)
	}
	checkDurable(t, spec, seen)
}

func readyz(t *testing.T, s *Server) int {
	t.Helper()
	resp, err := loadClient.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// MariaDB frozen (SIGSTOP): connections stay open and statements never
// answer. Only the request deadline can end a request, so this is where
// "bounded by the request timeout" is proven; the service recovers once
// the process runs again.
func TestFaultDatabaseFrozen(t *testing.T) {
	spec := testdb.Spec(t, testdb.MySQL)
	const requestTimeout = 2 * time.Second
	s := Start(t, spec, "--request-timeout", requestTimeout.String())
	frozenDatabase(t, s, requestTimeout, func(stop <-chan struct{}) (*outcomes, *sync.WaitGroup) {
		return readLoad(s.URL, 8, stop)
	})
}

// The same with checkout load (group commit on, as by default): a batch
// that no single request may cancel still ends by the latest deadline of its
// orders, and a failed attempt's key release has a short deadline of its own.
func TestFaultDatabaseFrozenCheckout(t *testing.T) {
	spec := testdb.Spec(t, testdb.MySQL)
	const requestTimeout = 2 * time.Second
	s := Start(t, spec, "--request-timeout", requestTimeout.String())
	id := setStockTo(t, s, "黑色,L", 100000)
	seen := frozenDatabase(t, s, requestTimeout, func(stop <-chan struct{}) (*outcomes, *sync.WaitGroup) {
		return load(t, s.URL, id, 8, stop)
	})
	checkDurable(t, spec, seen)
}

func frozenDatabase(t *testing.T, s *Server, requestTimeout time.Duration, start func(stop <-chan struct{}) (*outcomes, *sync.WaitGroup)) (orders []string) {
	t.Helper()
	stop := make(chan struct{})
	o, wg := start(stop)
	var once sync.Once
	halt := func() { once.Do(func() { close(stop); wg.Wait() }) }
	defer halt() // a failed wait still stops the load
	ok := func() int { _, codes, _ := o.snapshot(); return codes[""] }
	wait.Within(t, "20 answers before the freeze", 30*time.Second, func() bool { return ok() >= 20 })
	before := ok()
	thaw := freezeMariaDB(t)
	t.Cleanup(thaw) // registered at once: MariaDB never stays frozen
	frozen := time.Now()
	wait.Within(t, "UNAVAILABLE answers while frozen", 15*time.Second, func() bool {
		_, codes, _ := o.snapshot()
		return codes["UNAVAILABLE"] >= 8
	})
	if code := readyz(t, s); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database frozen: %d, want 503", code)
	}
	time.Sleep(time.Until(frozen.Add(4 * time.Second)))
	thaw()

	wait.Within(t, "answers after the thaw", 30*time.Second, func() bool { return ok() >= before+20 })
	halt()
	seen, codes, slowest := o.snapshot()
	t.Logf("outcomes across the freeze: %v; slowest answer %v", codes, slowest.Round(time.Millisecond))
	for code, n := range codes {
		if code != "" && code != "UNAVAILABLE" {
			t.Errorf("a client got %q %d times; want only successes and UNAVAILABLE", code, n)
		}
	}
	if slowest < requestTimeout {
		t.Errorf("slowest answer %v: no request waited for the frozen database (the test froze nothing?)", slowest)
	}
	if slowest > requestTimeout+2*time.Second {
		t.Errorf("slowest answer %v with a request timeout of %v: something waited past its deadline", slowest, requestTimeout)
	}
	return seen
}
