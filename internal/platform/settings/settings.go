// Package settings fills the settings a caller left unset from a service's
// defaults.
package settings

// number is what a size, a count or a duration is.
type number interface {
	~int | ~int32 | ~int64 | ~float64
}

// Positive sets *v to def unless it is positive: zero is a setting not
// given, and a size, a count or an interval below zero means nothing.
func Positive[T number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
