// Package errs is the one error vocabulary of the domain packages: a small
// set of categories, and precise errors that each wrap one of them.
//
// A domain names its precise errors with New:
//
//	var ErrOutOfStock = errs.New(errs.Conflict, "out of stock")
//
// and adds detail with %w, so that both the precise error and its category
// hold for errors.Is:
//
//	fmt.Errorf("%w: SKU %d", ErrOutOfStock, id) // Is ErrOutOfStock, Is errs.Conflict
//
// A failure with no precise error of its own uses the category directly
// (fmt.Errorf("%w: goods %d", errs.NotFound, id)). The GraphQL presenter
// (resolvers/errors.go) maps precise errors first, then categories, to
// extensions.code; the payment notification handler (internal/server/notify.go) maps
// categories to HTTP statuses. Packages below the domains (money, scalar,
// enums, skumatrix) keep their own sentinels, which the presenter maps too.
package errs

// category is an error that is one of the kinds below. Its message is what
// a bare use of the category says to a client.
type category struct{ msg string }

func (c *category) Error() string { return c.msg }

// The categories. Only those some caller tells apart; a new one is added
// with the code or status it answers.
var (
	// NotFound: an id that does not exist, or is not visible to the caller.
	NotFound error = &category{"not found"}
	// InvalidInput: malformed or out-of-range input; retrying it as it is
	// cannot succeed.
	InvalidInput error = &category{"invalid input"}
	// Conflict: the input is well formed, but the current state of the data
	// refuses it (a version moved on, too little stock, an order in another
	// state). It has no code of its own: every conflict is a precise error
	// with its own code.
	Conflict error = &category{"conflict"}
	// Unavailable: a dependency (the database) cannot be reached or did not
	// answer in time; the same request may succeed later.
	Unavailable error = &category{"unavailable"}
	// Unauthenticated: no credentials, or bad or expired ones, where they
	// are needed (a token, a webhook's signature).
	Unauthenticated error = &category{"authentication required"}
	// Forbidden: the caller is known, and its role or ownership does not
	// allow this.
	Forbidden error = &category{"forbidden"}
	// RateLimited: this client sent more of these requests than its limit
	// allows; the same request succeeds after the wait the answer names.
	RateLimited error = &category{"rate limited"}
)

// VersionConflict is the one precise error that several domains share: an
// optimistic version check failed (goods and SKUs in catalog, SKU stock in
// inventory), and the client should reload and retry.
var VersionConflict = New(Conflict, "version conflict: reload and retry")

// precise is an error of a domain, in its own words, of one category.
type precise struct {
	msg string
	cat error
}

func (e *precise) Error() string { return e.msg }
func (e *precise) Unwrap() error { return e.cat }

// New returns a precise error of category cat, whose message is msg alone
// (the category does not prefix it). Each call returns a distinct error:
// call it once, for a package-level variable.
func New(cat error, msg string) error {
	if _, ok := cat.(*category); !ok {
		panic("errs.New: " + cat.Error() + " is not a category of package errs")
	}
	return &precise{msg: msg, cat: cat}
}
