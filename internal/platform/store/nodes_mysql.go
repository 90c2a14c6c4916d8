package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// A list of Galera nodes ("mysql:DSN1,DSN2,DSN3"): every connection goes to
// the first node of the list that is ready (in the primary component,
// Synced), so every instance given the same list writes through the same
// node. On a hot SKU, writes through three nodes meet at certification and
// the node whose batches lose backs off while the other two go on: a
// rejoined node's instance lost every conflict for 10 s under CI's load
// (docs/operations.md). Through one node they queue on the row lock instead, as on one
// server. The other nodes are the writer's standbys: when it leaves the
// primary component the next ready node takes over within a probe, and a
// node that comes back takes its place again only after settle, so that a
// flapping node does not move the writes back and forth.
const (
	nodeProbeEvery = 500 * time.Millisecond
	nodeSettle     = 3 * time.Second
	nodeProbeLimit = 2 * time.Second
)

// nodeSet is the nodes of one list and which of them takes connections.
type nodeSet struct {
	names []string           // host:port, for the log
	probe []driver.Connector // one per node, for the readiness probe
	cur   atomic.Int32       // the node new and reused connections go to
	kick  chan struct{}      // a statement saw its node unavailable: probe now
	stop  chan struct{}
	done  chan struct{}
}

// splitNodes splits a mysql DSN list. A comma inside one DSN is written
// %2C (the driver unescapes parameter values).
func splitNodes(dsns string) []string {
	var out []string
	for _, d := range strings.Split(dsns, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func newNodeSet(cfgs []*mysql.Config) (*nodeSet, error) {
	s := &nodeSet{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, c := range cfgs {
		pc := c.Clone()
		pc.MultiStatements = false
		conn, err := mysql.NewConnector(pc)
		if err != nil {
			return nil, err
		}
		s.names = append(s.names, c.Addr)
		s.probe = append(s.probe, conn)
	}
	return s, nil
}

// start finds the first ready node before the pools open, then keeps
// probing.
func (s *nodeSet) start(ctx context.Context) {
	ready := s.probeAll(ctx)
	for i, ok := range ready {
		if ok {
			s.cur.Store(int32(i))
			break
		}
	}
	go s.run(ready)
}

func (s *nodeSet) close() {
	close(s.stop)
	<-s.done
}

func (s *nodeSet) run(ready []bool) {
	defer close(s.done)
	since := make([]time.Time, len(s.probe)) // when each node became ready (zero: not ready)
	now := time.Now()
	for i, ok := range ready {
		if ok {
			since[i] = now.Add(-nodeSettle)
		}
	}
	t := time.NewTicker(nodeProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), nodeProbeLimit)
		ready := s.probeAll(ctx)
		cancel()
		s.observe(since, ready, time.Now())
	}
}

// observe takes one probe's answers at now: a node not ready starts its
// settling over when it is next seen ready.
func (s *nodeSet) observe(since []time.Time, ready []bool, now time.Time) {
	for i, ok := range ready {
		switch {
		case !ok:
			since[i] = time.Time{}
		case since[i].IsZero():
			since[i] = now
		}
	}
	s.choose(since, now)
}

// choose moves the connections to the first node that has been ready for
// nodeSettle, or keeps them on the current node while it is ready.
func (s *nodeSet) choose(since []time.Time, now time.Time) {
	cur := int(s.cur.Load())
	next := -1
	for i := range since {
		if !since[i].IsZero() && (i == cur || now.Sub(since[i]) >= nodeSettle) {
			next = i
			break
		}
	}
	if next < 0 || next == cur {
		return // none ready: stay, so that the errors say what is wrong
	}
	s.cur.Store(int32(next))
	slog.Warn("galera: connections move to another node", "from", s.names[cur], "to", s.names[next])
}

// probeAll asks every node at once whether it is ready.
func (s *nodeSet) probeAll(ctx context.Context) []bool {
	ready := make([]bool, len(s.probe))
	var wg sync.WaitGroup
	for i := range s.probe {
		wg.Go(func() { ready[i] = s.probeOne(ctx, i) == nil })
	}
	wg.Wait()
	return ready
}

// probeOne opens a connection of its own each time: a probe that reused one
// could not tell a node's state from its old connection's.
func (s *nodeSet) probeOne(ctx context.Context, i int) error {
	c, err := s.probe[i].Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rows, err := c.(driver.QueryerContext).QueryContext(ctx, wsrepStateQuery, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	st := map[string]string{}
	v := make([]driver.Value, 2)
	for rows.Next(v) == nil {
		st[strings.ToLower(asString(v[0]))] = asString(v[1])
	}
	return wsrepState(st)
}

func asString(v driver.Value) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// wake asks for a probe now (a statement saw its node unavailable).
func (s *nodeSet) wake(err error) {
	if err != nil && (wsrepUnavailable(err) || errors.Is(err, driver.ErrBadConn)) {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// nodeConnector is one pool's connector over the set: the main pool and
// the batch pool (multi-statement) each have one, sharing the set's choice.
type nodeConnector struct {
	set   *nodeSet
	nodes []driver.Connector
}

func (c *nodeConnector) Driver() driver.Driver { return c.nodes[0].Driver() }

// Connect connects to the chosen node, or, when that fails, to the next
// that answers (the probe moves the choice within nodeProbeEvery).
func (c *nodeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	first := int(c.set.cur.Load())
	var errs []error
	for k := range c.nodes {
		i := (first + k) % len(c.nodes)
		conn, err := c.nodes[i].Connect(ctx)
		if err == nil {
			return newNodeConn(conn, c.set, i), nil
		}
		c.set.wake(driver.ErrBadConn)
		errs = append(errs, fmt.Errorf("node %s: %w", c.set.names[i], err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// nodeConn is a driver connection that knows its node: it is valid for
// reuse only while its node is the chosen one, so database/sql drops the
// connections to a node the set moved away from as they come back to the
// pool.
type nodeConn struct {
	driver.Conn
	set  *nodeSet
	node int
	// The MySQL driver's connection implements each of these.
	tx    driver.ConnBeginTx
	prep  driver.ConnPrepareContext
	exec  driver.ExecerContext
	query driver.QueryerContext
	ping  driver.Pinger
	reset driver.SessionResetter
	valid driver.Validator
	check driver.NamedValueChecker
}

func newNodeConn(c driver.Conn, set *nodeSet, node int) *nodeConn {
	return &nodeConn{
		Conn: c, set: set, node: node,
		tx: c.(driver.ConnBeginTx), prep: c.(driver.ConnPrepareContext), exec: c.(driver.ExecerContext),
		query: c.(driver.QueryerContext), ping: c.(driver.Pinger), reset: c.(driver.SessionResetter),
		valid: c.(driver.Validator), check: c.(driver.NamedValueChecker),
	}
}

func (c *nodeConn) IsValid() bool {
	return int(c.set.cur.Load()) == c.node && c.valid.IsValid()
}

func (c *nodeConn) ResetSession(ctx context.Context) error {
	if int(c.set.cur.Load()) != c.node {
		return driver.ErrBadConn
	}
	return c.reset.ResetSession(ctx)
}

func (c *nodeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.tx.BeginTx(ctx, opts)
	c.set.wake(err)
	return tx, err
}

func (c *nodeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.prep.PrepareContext(ctx, query)
	c.set.wake(err)
	return st, err
}

func (c *nodeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.exec.ExecContext(ctx, query, args)
	c.set.wake(err)
	return r, err
}

func (c *nodeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.query.QueryContext(ctx, query, args)
	c.set.wake(err)
	return r, err
}

func (c *nodeConn) Ping(ctx context.Context) error {
	err := c.ping.Ping(ctx)
	c.set.wake(err)
	return err
}

func (c *nodeConn) CheckNamedValue(nv *driver.NamedValue) error { return c.check.CheckNamedValue(nv) }
