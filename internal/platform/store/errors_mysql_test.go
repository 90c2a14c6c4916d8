package store

import (
	"testing"

	"github.com/go-sql-driver/mysql"
)

// On a Galera node a duplicate primary key is an id two nodes handed out
// while the cluster changed size: retried, and no business key's "already
// done". On a plain server it stays a duplicate.
func TestGaleraPrimaryKeyCollisionIsRetried(t *testing.T) {
	pk := &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '7703' for key 'PRIMARY'"}
	biz := &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'u-k' for key 'idempotency_user_id_key'"}
	defer galera.Store(galera.Load())
	galera.Store(false)
	if RetryCause(pk) != "" || !IsDuplicate(pk) {
		t.Errorf("plain server: primary-key duplicate retried %q, duplicate %v; want not retried, a duplicate", RetryCause(pk), IsDuplicate(pk))
	}
	galera.Store(true)
	if RetryCause(pk) != "autoinc" || IsDuplicate(pk) {
		t.Errorf("Galera: primary-key duplicate retried %q, duplicate %v; want autoinc, not a duplicate", RetryCause(pk), IsDuplicate(pk))
	}
	if RetryCause(biz) != "" || !IsDuplicate(biz) || !IsDuplicateOf(biz, "idempotency_user_id_key") {
		t.Errorf("Galera: a business key's duplicate must stay one (retried %q)", RetryCause(biz))
	}
}
