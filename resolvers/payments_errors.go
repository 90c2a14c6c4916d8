package resolvers

import "storefront/payments"

func init() {
	registerCodes(
		errorCode{payments.ErrInvalidInput, "INVALID_INPUT"},
		errorCode{payments.ErrOrderNotFound, "NOT_FOUND"},
	)
}
