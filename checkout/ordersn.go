package checkout

import (
	"crypto/rand"
	"math/big"
	"time"
)

// newOrderSn returns a time prefix (sortable, readable on a receipt) and 12
// random digits, so order numbers are unique in practice (the unique index is
// the guarantee) and a customer cannot guess the neighbours of their own.
func newOrderSn(now time.Time) string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000_000_000))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	s := n.String()
	for len(s) < 12 {
		s = "0" + s
	}
	return now.UTC().Format("20060102150405") + s
}

// newEventID returns a random UUID (version 4) for an outbox event.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0x0f])
	}
	return string(out)
}
