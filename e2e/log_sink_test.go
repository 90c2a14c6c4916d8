package e2e

import (
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// Without --events-nats a dispatched event is a log line only at
// --log-level debug; at the default level a pass logs its count.
func TestLogSinkEventsAtDebug(t *testing.T) {
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			s := Start(t, testdb.Spec(t, testdb.SQLite), "--log-level", level, "--outbox-interval", "100ms")
			id, _ := tshirtSku(t, s, "黑色,L")
			var p placed
			decode(t, s.Query(t, s.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}), &p)
			logged := func() bool {
				for _, l := range strings.Split(s.stderr.String(), "\n") {
					if strings.Contains(l, `"msg":"event"`) && strings.Contains(l, p.PlaceOrder.OrderSn) {
						return true
					}
				}
				return false
			}
			// The broker lane's pass (the log sink's) logs its count after
			// its sink took the events; the webhooks lane counts its own,
			// sometimes first.
			wait.Within(t, "the broker lane's count", 10*time.Second, func() bool {
				for _, l := range strings.Split(s.stderr.String(), "\n") {
					if strings.Contains(l, `"msg":"dispatched events"`) && strings.Contains(l, `"lane":"broker"`) {
						return true
					}
				}
				return false
			})
			if got, want := logged(), level == "debug"; got != want {
				t.Errorf("--log-level %s: the order's event logged %v, want %v; stderr:\n%s", level, got, want, s.stderr)
			}
		})
	}
}
