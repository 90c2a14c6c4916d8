package store

import (
	"errors"
	"strings"
	"testing"
)

// A node takes requests only when wsrep_ready is ON and it is Synced: a
// donor (Donor/Desynced) answers with wsrep_ready ON while it streams its
// state to a joiner, and a load balancer must drop it until it is Synced
// again, as it drops a node not ready at all.
func TestWsrepState(t *testing.T) {
	for _, tc := range []struct {
		ready, state string
		ok           bool
	}{
		{"ON", "Synced", true},
		{"ON", "Donor/Desynced", false},
		{"ON", "Joined", false},
		{"ON", "Joining", false},
		{"OFF", "Synced", false},
		{"OFF", "Initialized", false},
		{"", "", false}, // neither variable: not a node that says it is ready
	} {
		st := map[string]string{}
		if tc.ready != "" {
			st["wsrep_ready"] = tc.ready
		}
		if tc.state != "" {
			st["wsrep_local_state_comment"] = tc.state
		}
		err := wsrepState(st)
		if tc.ok {
			if err != nil {
				t.Errorf("wsrep_ready %s, %s: %v, want ready", tc.ready, tc.state, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("wsrep_ready %s, %s: %v, want ErrUnavailable", tc.ready, tc.state, err)
		}
		if r := NotReadyReason(err); tc.state != "" && !strings.Contains(r, tc.state) {
			t.Errorf("wsrep_ready %s, %s: /readyz would say %q, which does not name the state", tc.ready, tc.state, r)
		}
	}
}
