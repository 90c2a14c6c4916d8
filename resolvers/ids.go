package resolvers

import "storefront/internal/vocab/scalar"

// ID's first model is graphql.ID, so that a cart id (a 128-bit token) can be
// an ID! argument as the contract has it: gqlgen hands every ID argument and
// input field over as the string the client sent. The database ids are
// parsed here, by the rule scalar.UnmarshalInt64ID applied during argument
// coercion before, so that a malformed one still answers INVALID_INPUT
// (scalar.ErrInvalidID) before the token is checked or anything is read or
// changed.

// parseID is the one parse of a database id argument.
func parseID(s string) (int64, error) {
	return scalar.UnmarshalInt64ID(s)
}

// ids parses the id fields of a generated input in one pass and keeps the
// first failure, so that a converter builds its domain input as one literal
// and checks err once at the end; after a failure it parses no further.
type ids struct{ err error }

func (p *ids) one(s string) int64 {
	if p.err != nil {
		return 0
	}
	id, err := parseID(s)
	p.err = err
	return id
}

// opt keeps an absent id absent.
func (p *ids) opt(s *string) *int64 {
	if s == nil {
		return nil
	}
	id := p.one(*s)
	if p.err != nil {
		return nil
	}
	return &id
}

// list keeps a list left out (nil) apart from an empty one.
func (p *ids) list(ss []string) []int64 {
	if ss == nil || p.err != nil {
		return nil
	}
	out := make([]int64, len(ss))
	for i, s := range ss {
		if out[i] = p.one(s); p.err != nil {
			return nil
		}
	}
	return out
}
