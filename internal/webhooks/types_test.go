package webhooks

// The event types the tests' webhooks offer: the order events serve offers
// (internal/app gives checkout's), spelled here so that the package's tests,
// like the package, import no domain.
const (
	orderPlaced = "OrderPlaced"
	orderPaid   = "OrderPaid"
)

var eventTypes = []string{orderPlaced, orderPaid, "OrderClosed", "OrderRefunded"}
