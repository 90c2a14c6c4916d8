package aftersale

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"time"
)

// newSn is an after-sale's number: "AS", the UTC time to the second and 12
// random digits (28 characters), unique by the index and not guessable
// from a buyer's own, like an order's. Its refunds are numbered from it
// (<sn>-R1, …), so they fit the providers' 64-character refund numbers.
func newSn(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := strconv.FormatUint(binary.LittleEndian.Uint64(b[:])%1_000_000_000_000, 10)
	out := now.UTC().AppendFormat([]byte("AS"), "20060102150405")
	for range 12 - len(n) {
		out = append(out, '0')
	}
	return string(append(out, n...))
}
