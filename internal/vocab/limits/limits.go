// Package limits holds the bounds on input that more than one package
// checks, so that each is one number.
package limits

// MaxStock bounds one stock change and any balance or pool an admin sets
// (catalog's creation, inventory's adjustments and pools): a typo of a few
// extra digits should be refused, not booked.
const MaxStock = 100_000_000
