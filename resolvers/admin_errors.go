package resolvers

import (
	"storefront/catalog"
	"storefront/inventory"
)

func init() {
	registerCodes(
		errorCode{catalog.ErrSkuCodeTaken, "INVALID_INPUT"},
		errorCode{inventory.ErrOutOfStock, "OUT_OF_STOCK"},
		errorCode{inventory.ErrNotFound, "NOT_FOUND"},
		errorCode{inventory.ErrVersionConflict, "VERSION_CONFLICT"},
		errorCode{inventory.ErrInvalidInput, "INVALID_INPUT"},
	)
}
