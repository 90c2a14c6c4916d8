package store

import (
	"errors"

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
	return me.Number == 1062, me.Message, true
}

func (mysqlErrors) answered(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me)
}

func (mysqlErrors) connErr(err error) bool { return errors.Is(err, mysql.ErrInvalidConn) }
