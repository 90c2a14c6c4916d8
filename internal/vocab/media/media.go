// Package media holds the content types a goods carries besides its SKU
// matrix: images (stored as JSON on the goods row) and their rules.
package media

// Image is one picture of a goods, in display order.
type Image struct {
	URL string `json:"url"`
	Alt string `json:"alt"`
}
