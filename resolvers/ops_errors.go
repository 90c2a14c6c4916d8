package resolvers

import (
	"errors"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// gqlgenCode gives a code to refusals gqlgen raises itself, which carry no
// sentinel: they are the client's doing and must not be logged and
// answered as INTERNAL.
func gqlgenCode(err error) string {
	// The generated introspection resolvers return this exact error when
	// introspection is switched off.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "introspection disabled" {
			return "FORBIDDEN"
		}
	}
	// A *gqlerror.Error reaching the presenter before any resolver ran
	// (no path) is a refused request: an APQ hash that does not match its
	// query, an undecodable body, an unsupported APQ version.
	var gerr *gqlerror.Error
	if errors.As(err, &gerr) && len(gerr.Path) == 0 {
		return "INVALID_INPUT"
	}
	return ""
}
