package resolvers

import "storefront/checkout"

func init() {
	registerCodes(
		errorCode{checkout.ErrInvalidInput, "INVALID_INPUT"},
		errorCode{checkout.ErrInvalidQuantity, "INVALID_QUANTITY"},
		errorCode{checkout.ErrNotFound, "NOT_FOUND"},
		errorCode{checkout.ErrSkuUnavailable, "SKU_UNAVAILABLE"},
		errorCode{checkout.ErrOutOfStock, "OUT_OF_STOCK"},
		errorCode{checkout.ErrIdempotencyInProgress, "IDEMPOTENCY_IN_PROGRESS"},
		errorCode{checkout.ErrIdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED"},
		errorCode{checkout.ErrInvalidOrderState, "INVALID_ORDER_STATE"},
	)
}
