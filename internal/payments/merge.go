package payments

import (
	"slices"
	"storefront/ent/payment"
	"strings"

	"storefront/internal/vocab/enums"
)

// mergeFrom lists, for each incoming verified state, the current states it
// may replace (seed 000): a redirect never changes an existing row, PAID is
// never downgraded, REFUNDED is terminal. Whatever the arrival order of
// redirects and notifications, the result is the same.
var mergeFrom = map[enums.PaymentStatus][]enums.PaymentStatus{
	enums.PaymentPaid:     {enums.PaymentPending, enums.PaymentFailed},
	enums.PaymentFailed:   {enums.PaymentPending},
	enums.PaymentRefunded: {enums.PaymentPending, enums.PaymentPaid},
}

// merge returns the state after a verified notification of incoming arrives
// at a payment in state current.
func merge(current, incoming enums.PaymentStatus) enums.PaymentStatus {
	if slices.Contains(mergeFrom[incoming], current) {
		return incoming
	}
	return current
}

// mergeSQL is merge as the SET expression of the atomic upsert, so the rule
// is applied by the database on the row it holds locked, not on a stale read.
//
// The row's columns are named with its table: in an upsert's update
// PostgreSQL sees two rows (the row and EXCLUDED) and refuses a bare name
// as ambiguous, while MySQL and SQLite read the qualified name as the row.
func mergeSQL(incoming enums.PaymentStatus) string {
	col := payment.Table + "." + payment.FieldStatus
	from := mergeFrom[incoming]
	if len(from) == 0 {
		return col
	}
	quoted := make([]string, len(from))
	for i, s := range from {
		quoted[i] = "'" + string(s) + "'"
	}
	return "CASE WHEN " + col + " IN (" + strings.Join(quoted, ",") + ") THEN '" + string(incoming) + "' ELSE " + col + " END"
}
