package resolvers

import "storefront/inventory"

func init() {
	registerCodes(
		errorCode{inventory.ErrOutOfStock, "OUT_OF_STOCK"},
		errorCode{inventory.ErrNotFound, "NOT_FOUND"},
		errorCode{inventory.ErrVersionConflict, "VERSION_CONFLICT"},
		errorCode{inventory.ErrInvalidInput, "INVALID_INPUT"},
	)
}
