package store

import (
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"
)

type mysqlErrors struct{}

func init() { errorReaders = append(errorReaders, mysqlErrors{}) }

func (mysqlErrors) retryCause(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213:
			return "deadlock"
		case 1205:
			return "lock_wait"
		case 1062:
			if autoincCollision(me) {
				return "autoinc"
			}
		}
	}
	return ""
}

// duplicate: 1062, whose message names the index ("… for key
// 'idempotency_user_id_key'").
func (mysqlErrors) duplicate(err error) (bool, string, bool) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false, "", false
	}
	return me.Number == 1062 && !autoincCollision(me), me.Message, true
}

// autoincCollision: on a Galera node a duplicate primary key is no business
// key's second write (every table's id is AUTO_INCREMENT, and business keys
// are unique indexes of their own) but two nodes that handed out the same
// id while the cluster changed size (wsrep_auto_increment_control moves
// every node's offset and step as members leave and rejoin): seen as 4
// placeOrder answers INTERNAL on a node beside the one rejoining. Run again,
// the insert takes an id of the new step.
func autoincCollision(me *mysql.MySQLError) bool {
	return galera.Load() && me.Number == 1062 && strings.Contains(me.Message, "for key 'PRIMARY'")
}

func (mysqlErrors) answered(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me)
}

// connErr: a connection gone, or refused for want of room: 1040 "Too many
// connections" (max_connections), 1203 (max_user_connections) and 1226 (an
// account's MAX_USER_CONNECTIONS or another resource of its own) are the
// server full for a moment: the caller retries later (UNAVAILABLE), never
// an INTERNAL.
func (mysqlErrors) connErr(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1040, 1203, 1226:
			return true
		}
	}
	return errors.Is(err, mysql.ErrInvalidConn)
}
