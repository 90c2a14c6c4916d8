package payments

import "storefront/internal/vocab/enums"

// Merge is merge, the rule mergeSQL spells, for the table test of every
// pair of states.
func Merge(current, incoming enums.PaymentStatus) enums.PaymentStatus {
	return merge(current, incoming)
}

// IgnoreLateSuccess drops a refund's success reported after its failure
// until the returned function runs.
func IgnoreLateSuccess() (restore func()) {
	ignoreLateSuccess = true
	return func() { ignoreLateSuccess = false }
}
