package inventory

import (
	"time"

	"storefront/internal/platform/store"
)

// Service moves stock through the ledger (admin adjustments, stocktakes) and
// reads it back.
type Service struct {
	db *store.DB
}

// New returns an inventory service on db.
func New(db *store.DB) *Service { return &Service{db: db} }

// LedgerRow is a ledger row as clients see it; GraphQL's StockLog binds to it.
type LedgerRow struct {
	ID          int64
	ItemID      int64
	GoodsID     int64
	ChangeType  int64
	ChangeNum   int64
	BeforeStock int64
	AfterStock  int64
	BizType     string
	BizSn       string
	Remark      string
	CreatedAt   time.Time
	PoolID      int64
}
