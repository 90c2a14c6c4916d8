// Package guard holds the guards a transaction writes on rows of its own
// kind's table, beside the stock it takes: a row claim (rows taken from a
// free state to a held one, all of them or none: a customer's coupon
// locked by the order that uses it) and a guarded counter (units per
// scope and holder that may only grow within a limit: a buyer's units of
// a pool, a customer's claims of a coupon or purchases of a goods).
//
// A guard is checked by the statement that writes it, inside the seller's
// transaction and in its lock order, so no interleaving passes it. Its
// kind is a definition of a table and its columns owned by the package
// that owns the table (promo, inventory's pools); guard knows no table and
// no domain. Every engine renders any kind: the plain path here (TakeRows,
// AddCounters), and the group-commit batch's engines through the renderer
// of their server (guard_mysql.go, guard_postgres.go, guard_sqlite.go).
//
// A new limit is a kind and nothing more. A promotion's budget is a
// counter scoped by the promotion with one holder, its units the discount
// given in minor units and its limit the budget:
//
//	var Budgets = &guard.CounterKind{Table: "promotion_budget", Scope: "promotion_id",
//		Holder: "holder", Units: "given", Exceeded: ErrBudgetSpent}
//	guard.Add(Budgets, promotion.ID, "budget", discount.Minor(), promotion.Budget)
//
// A customer's balance is a counter whose units are what the customer
// owes, the balance negated: a top-up adds −amount, a payment adds amount
// within the limit 0, so no interleaving of payments spends more than was
// topped up (TestBudgetAndBalanceAreCounters).
package guard
