package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB Galera (wsrep): what the service needs to know of a node.
//
// A node cut off from the cluster's primary component refuses every
// statement that touches data with 1047 (ER_UNKNOWN_COM_ERROR, "WSREP has not
// yet prepared node for application use"), and a transaction caught at
// COMMIT by it with 1180 ("Got error 6 during COMMIT"). Neither is a fault
// of the request: the node is unavailable until it rejoins, so they are
// ErrUnavailable (Classify) and /readyz says so (Ready).
func wsrepUnavailable(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1047:
		return true
	case 1180:
		// 1180 is also any engine's error during COMMIT: only the
		// replication layer's own is a node out of the cluster ("Got error
		// 6 during COMMIT", ENXIO from wsrep, or "Error while appending
		// streaming replication fragment(provider status: Not connected to
		// Primary Component)").
		return strings.Contains(me.Message, "error 6 ") || strings.Contains(me.Message, "Primary Component")
	}
	return false
}

// galera is set once Open finds wsrep on: the server certifies writes
// against the other nodes', so a 1213 may be a certification failure, which
// a rerun of the transaction almost always gets past (conflictRetries). It
// is the process's, not a DB's: Attempts has no DB, and a process serves
// one database (a test or benchmark that opens a Galera node and a plain
// server in turn retries the plain one as Galera too: more, never less).
var galera atomic.Bool

// Galera conflicts are retried until the caller's deadline (at most 50
// times, about 10 s of backoff): on a hot row written through three nodes
// each node's batch loses to the other two's often, and two retries left
// 7–19 % of buyers refused with stock left; eight still refused
// 1 buyer in 2,600 under 64 clients without pause (docs/operations.md). A
// certification conflict means another node's write won, so the cluster
// progresses: waiting longer is never waiting for nothing. The backoff
// doubles from 10 ms to 160 ms (conflictBackoff) so that the nodes' batches
// stop meeting at the same instant.
const (
	conflictRetries       = 2
	galeraConflictRetries = 50
)

func maxConflictRetries() int {
	if galera.Load() {
		return galeraConflictRetries
	}
	return conflictRetries
}

// wsrepOn reports whether the MariaDB server behind db replicates with wsrep
// (a Galera node). A plain MariaDB has wsrep_on OFF and no provider; MySQL
// has no such variable at all (no row).
func wsrepOn(ctx context.Context, db *sql.DB) (bool, error) {
	var name, val string
	err := db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'").Scan(&name, &val)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return strings.EqualFold(val, "ON"), nil
}

// Ready reports whether the database may take requests (for /readyz): it
// answers, and, on a Galera node, the node is in the primary component and
// Synced. A node that is not (isolated, joining, a donor) answers 1047 to
// reads and writes or serves a stale copy: a load balancer must drop it
// until it rejoins. A server without wsrep is ready when it answers.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.Ping(ctx); err != nil {
		return err
	}
	if d.Kind != MariaDB {
		return nil
	}
	on, err := wsrepOn(ctx, d.SQL)
	if err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	if !on {
		return nil
	}
	rows, err := d.SQL.QueryContext(ctx, wsrepStateQuery)
	if err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	defer rows.Close()
	st := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return errors.Join(ErrUnavailable, err)
		}
		st[strings.ToLower(k)] = v
	}
	if err := rows.Err(); err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	return wsrepState(st)
}

// wsrepStateQuery reads what wsrepState judges. SHOW STATUS answers on a
// node out of the cluster, where SELECTs of tables do not.
const wsrepStateQuery = "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment')"

// wsrepState is nil when a node may take requests: wsrep_ready ON and
// Synced (keys lower-cased).
func wsrepState(st map[string]string) error {
	if st["wsrep_ready"] != "ON" || st["wsrep_local_state_comment"] != "Synced" {
		return errors.Join(ErrUnavailable, &nodeNotReady{orNone(st["wsrep_ready"]), orNone(st["wsrep_local_state_comment"])})
	}
	return nil
}

// nodeNotReady is a Galera node that answers but may not take requests.
type nodeNotReady struct{ ready, state string }

func (e *nodeNotReady) Error() string {
	return fmt.Sprintf("galera node not ready: wsrep_ready %s, wsrep_local_state_comment %s", e.ready, e.state)
}

// NotReadyReason is the Galera state that made Ready fail ("" when the
// cause was something else), for /readyz's body.
func NotReadyReason(err error) string {
	var nr *nodeNotReady
	if errors.As(err, &nr) {
		return nr.Error()
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// conflictBackoff is the wait before the n-th retry of a conflict (n from 1):
// 10 ms + 0–20 ms as seed 003 says, and on Galera doubling from 10 ms to
// 160 ms (plus as much jitter), so that three nodes' batches on one row
// stop meeting at the same instant again.
func conflictBackoff(n int) time.Duration {
	if !galera.Load() {
		return 10*time.Millisecond + rand.N(20*time.Millisecond)
	}
	d := 10 * time.Millisecond << min(n-1, 4)
	return d + rand.N(d)
}
