package cart

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"storefront/internal/vocab/enums"
)

// A cart made without lines is not stored until its first line (an
// anonymous client could otherwise fill the table with empty carts that
// live for the TTL). Its id is still handed out, and it must then read as
// the empty cart it is, not as an unknown one, with nothing stored to say
// so: the id vouches for itself. Its 16 bytes are
//
//	4: when it was handed out (unix seconds; it expires as a stored cart does)
//	6: random
//	6: HMAC-SHA256(secret, the 10 bytes before, 0, owner), truncated
//
// so an id no row has reads as an empty cart only when the server made it,
// for this owner ("" = anyone with the id), within the TTL. Stored carts
// keep 128 random bits (newToken); an id of either kind is looked up first.
const (
	stampBytes = 4
	nonceBytes = 6
	headBytes  = stampBytes + nonceBytes
)

// emptyToken is the id of an empty cart of owner handed out at now.
func (s *Service) emptyToken(owner string, now time.Time) string {
	var b [tokenBytes]byte
	binary.BigEndian.PutUint32(b[:stampBytes], uint32(now.Unix()))
	_, _ = rand.Read(b[stampBytes:headBytes])
	copy(b[headBytes:], s.sign(b[:headBytes], owner))
	return hex.EncodeToString(b[:])
}

func (s *Service) sign(head []byte, owner string) []byte {
	h := hmac.New(sha256.New, s.cfg.Secret)
	h.Write(head)
	h.Write([]byte{0})
	h.Write([]byte(owner))
	return h.Sum(nil)[:tokenBytes-headBytes]
}

// unstored says whether token, which no row has, is an empty cart that who
// may see: made by this server for who or for anyone, and not expired. It
// returns the cart's owner and when it was handed out.
func (s *Service) unstored(token, who string) (owner string, at time.Time, ok bool) {
	if !wellFormed(token) {
		return "", time.Time{}, false
	}
	b, err := hex.DecodeString(token)
	if err != nil {
		return "", time.Time{}, false
	}
	at = time.Unix(int64(binary.BigEndian.Uint32(b[:stampBytes])), 0).UTC()
	if s.expired(at) || at.After(s.now().Add(time.Minute)) {
		return "", time.Time{}, false
	}
	mac := b[headBytes:]
	switch {
	case who != "" && hmac.Equal(mac, s.sign(b[:headBytes], who)):
		return who, at, true
	case hmac.Equal(mac, s.sign(b[:headBytes], "")):
		return "", at, true
	}
	return "", time.Time{}, false
}

// empty is the view of an empty cart not stored (yet).
func (s *Service) empty(token, owner string, at time.Time) *Cart {
	return &Cart{ID: token, Status: enums.CartOpen, Lines: []*Line{}, Warnings: []*Warning{},
		UpdatedAt: at, ExpiresAt: at.Add(s.cfg.TTL), owner: owner}
}
