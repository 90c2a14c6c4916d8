package outbox

import "encoding/json"

// legacyAggregate is the aggregate of an event in a row without an
// aggregate type: one written by a release before aggregate types, or by such an instance still running during a rolling upgrade.
// Every event of those releases was an order's, its aggregate_id the
// order's database id (empty in a batch's row) and its payload naming the
// order by orderSn, which its CloudEvent's subject was: read from there,
// so that such a row is sent as it was. A payload without it (or not an
// object) gives no subject, as before; one that is not JSON fails in the
// sink's encoding, as before. Not needed once no such row is left and no
// older instance writes (docs/operations.md, "Migrations").
func legacyAggregate(payload string) Aggregate {
	var p struct {
		OrderSn string `json:"orderSn"`
	}
	_ = json.Unmarshal([]byte(payload), &p)
	return Aggregate{Type: "order", ID: p.OrderSn}
}
