package payments

// IgnoreLateSuccess drops a refund's success reported after its failure
// until the returned function runs.
func IgnoreLateSuccess() (restore func()) {
	ignoreLateSuccess = true
	return func() { ignoreLateSuccess = false }
}
