package checkout

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"strconv"
	"time"
)

// newOrderSn returns a time prefix (sortable, readable on a receipt) and 12
// random digits, so order numbers are unique in practice (the unique index is
// the guarantee) and a customer cannot guess the neighbours of their own.
func newOrderSn(now time.Time) string {
	const digits = 1_000_000_000_000
	// Uniform over the 12 digits: draws from the top, incomplete range of
	// 64-bit values are drawn again (one in 54 million).
	const limit = math.MaxUint64 - math.MaxUint64%digits
	var b [8]byte
	v := uint64(limit)
	for v >= limit {
		_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
		v = binary.LittleEndian.Uint64(b[:])
	}
	out := make([]byte, 0, 26)
	out = now.UTC().AppendFormat(out, "20060102150405")
	n := strconv.FormatUint(v%digits, 10)
	for range 12 - len(n) {
		out = append(out, '0')
	}
	return string(append(out, n...))
}
