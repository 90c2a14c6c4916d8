package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Columns and shapes many tables share, spelled once. Plain functions, not
// mixins: a mixin's fields come first, and each table keeps its column order.

// table names a table: ent would otherwise derive it from the type's name.
func table(name string) []schema.Annotation {
	return []schema.Annotation{entsql.Table(name)}
}

// datetime is the type of every time column on MySQL and MariaDB:
// DATETIME(6), not ent's default TIMESTAMP, which holds only 1970-01-01
// 00:00:01 to 2038-01-19 03:14:07 and whole seconds. DATETIME(6) holds years
// 1000 to 9999 to the microsecond, as PostgreSQL's timestamptz keeps them;
// the driver writes and reads it as UTC (store's mysqlConfig: Loc), so the
// server's time zone never shifts it. The migration converts an existing
// TIMESTAMP or DATETIME column in place. PostgreSQL and SQLite keep ent's
// types. Every field.Time takes it.
var datetime = map[string]string{dialect.MySQL: "datetime(6)"}

// id is every table's key: an int64 the database assigns and never reuses.
func id() ent.Field { return field.Int64("id") }

// createdAt is when the row was written; it never changes.
func createdAt() ent.Field { return field.Time("created_at").SchemaType(datetime).Default(time.Now).Immutable() }

// updatedAt moves on every update ent makes.
func updatedAt() ent.Field {
	return field.Time("updated_at").SchemaType(datetime).Default(time.Now).UpdateDefault(time.Now)
}

// version is the row's optimistic-lock counter: every CAS on the row
// compares and raises it.
func version() ent.Field { return field.Int64("version").Default(1) }

// owner is the customer (the sign-in's subject) a row belongs to for good.
func owner() ent.Field { return field.String("user_id").MaxLen(64).NotEmpty().Immutable() }

// buyerCounter is the shape of a guarded per-customer counter
// (internal/inventory/counter.go): units one customer holds of the thing
// named by key, one row per (key, customer).
func buyerCounter(key string) []ent.Field {
	return []ent.Field{
		id(),
		field.Int64(key),
		field.String("user_id").MaxLen(64),
		field.Int64("units").Default(0),
	}
}

// buyerCounterIndex makes a counter's row unique per (key, customer): the
// first add inserts it, every later one is a CAS on it.
func buyerCounterIndex(key string) []ent.Index {
	return []ent.Index{index.Fields(key, "user_id").Unique()}
}
