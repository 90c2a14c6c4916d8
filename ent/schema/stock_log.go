package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// StockLog is the stock ledger (seed table ls_stock_log): stock is only the
// materialised balance of these rows. There is deliberately no update path.
type StockLog struct{ ent.Schema }

func (StockLog) Annotations() []schema.Annotation {
	return table("stock_log")
}

func (StockLog) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("item_id"),
		// Denormalised for per-goods reports without a join.
		field.Int64("goods_id"),
		// 1 order deduct, 2 payment deduct, 3 cancel/close restore, 4 refund restore,
		// 5 admin adjustment / opening, 6 stocktake, 7 moved to a stock pool,
		// 8 returned from a pool.
		field.Int8("change_type"),
		field.Int64("change_num"),
		field.Int64("before_stock"),
		field.Int64("after_stock"),
		field.String("biz_type").MaxLen(32),
		field.String("biz_sn").MaxLen(64),
		field.String("remark").MaxLen(255).Default(""),
		createdAt(),
		// 0: the SKU's main stock; otherwise the stock pool whose balance
		// this row moves (its before/after are the pool's).
		field.Int64("pool_id").Default(0),
	}
}

// uk_biz makes a second booking of the same document on the same SKU fail in
// the database: duplicate callbacks, closers and retries turn into no-ops.
// pool_id is part of it: moving units into a pool books one row on main
// stock and one on the pool under the same business key.
// item_id is a plain column (no FK edge) so the hot path can insert with
// INSERT … SELECT from the SKU row it just updated.
func (StockLog) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("biz_type", "biz_sn", "item_id", "change_type", "pool_id").Unique().StorageKey("uk_biz"),
		index.Fields("item_id", "created_at"),
	}
}
