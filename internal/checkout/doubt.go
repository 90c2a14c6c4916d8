package checkout

import (
	"context"
	"fmt"
	"slices"
)

// settled is ids less the orders the payment check (Config.Payments) says
// not to close in this pass: a started payment may have been paid.
func (s *Service) settled(ctx context.Context, ids []int64) ([]int64, error) {
	if s.cfg.Payments == nil || len(ids) == 0 {
		return ids, nil
	}
	keep, err := s.cfg.Payments.Unsettled(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("asking payments before closing: %w", err)
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return keep[id] }), nil
}
