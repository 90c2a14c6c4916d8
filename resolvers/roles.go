package resolvers

import (
	"context"

	"storefront/internal/platform/auth"
)

// buyer is the caller allowed to order: a customer or an admin.
func buyer(ctx context.Context) (auth.Principal, error) {
	return auth.Require(ctx, auth.Customer, auth.Admin)
}

// admin wraps an admin's operation for its converted input: the input's
// error first (as argument coercion's would come), then the caller's role,
// then the call. return admin(ctx, svc.Op)(opInput(input)).
func admin[In, Out any](ctx context.Context, do func(context.Context, In) (Out, error)) func(In, error) (Out, error) {
	return func(in In, err error) (Out, error) {
		if err == nil {
			_, err = auth.Require(ctx, auth.Admin)
		}
		if err != nil {
			var none Out
			return none, err
		}
		return do(ctx, in)
	}
}
