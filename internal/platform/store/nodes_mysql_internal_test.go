package store

import (
	"testing"
	"time"
)

// The writes stay on a ready node; they move to the first ready node when
// theirs is not ready; a node earlier in the list takes them back only
// after it has been ready for nodeSettle; with none ready they stay.
func TestNodeSetChoice(t *testing.T) {
	now := time.Now()
	ready := func(ago time.Duration) time.Time { return now.Add(-ago) }
	var none time.Time
	for _, tc := range []struct {
		name  string
		cur   int32
		since []time.Time
		want  int32
	}{
		{"the writer ready stays", 0, []time.Time{ready(time.Hour), ready(time.Hour), ready(time.Hour)}, 0},
		{"the writer gone: the next ready node", 0, []time.Time{none, ready(time.Hour), ready(time.Hour)}, 1},
		{"the next one gone too: the third", 0, []time.Time{none, none, ready(time.Hour)}, 2},
		{"node 1 back but not settled: stay on 2", 1, []time.Time{ready(nodeSettle / 2), ready(time.Hour), ready(time.Hour)}, 1},
		{"node 1 back and settled: back to 1", 1, []time.Time{ready(nodeSettle), ready(time.Hour), ready(time.Hour)}, 0},
		{"the current one just back counts as ready", 2, []time.Time{none, none, ready(0)}, 2},
		{"none ready: stay", 1, []time.Time{none, none, none}, 1},
	} {
		s := &nodeSet{names: []string{"n1", "n2", "n3"}}
		s.cur.Store(tc.cur)
		s.choose(tc.since, now)
		if got := s.cur.Load(); got != tc.want {
			t.Errorf("%s: node %d, want %d", tc.name, got+1, tc.want+1)
		}
	}
}

func TestSplitNodes(t *testing.T) {
	got := splitNodes(" root@tcp(a:1)/db?x=1, root@tcp(b:2)/db,,")
	if len(got) != 2 || got[0] != "root@tcp(a:1)/db?x=1" || got[1] != "root@tcp(b:2)/db" {
		t.Errorf("splitNodes: %q", got)
	}
}

// The probe's view over time (observe, every nodeProbeEvery): after all
// three nodes were gone, node 3 comes back first, then the writer's own
// node 2, then node 1 comes and goes in spells shorter than nodeSettle.
// The writes stay on node 2 from the moment it is back, though node 3 has
// settled by then and node 1 keeps reappearing; node 1 takes them only
// once it has stayed ready for nodeSettle.
func TestNodeSetWriterStaysWhileReady(t *testing.T) {
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	up := func(d time.Duration, spells ...[2]time.Duration) bool {
		for _, s := range spells {
			if d >= s[0] && d < s[1] {
				return true
			}
		}
		return false
	}
	const forever = time.Hour
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	// Node 1 ready in spells of 2 s (under nodeSettle), then for good at 12 s.
	node1 := [][2]time.Duration{{sec(3.5), sec(5.5)}, {sec(6), sec(8)}, {sec(9), sec(11)}, {sec(12), forever}}
	node2 := [][2]time.Duration{{sec(3.5), forever}}
	node3 := [][2]time.Duration{{sec(1), forever}}

	s := &nodeSet{names: []string{"n1", "n2", "n3"}}
	s.cur.Store(1) // node 2 wrote before the outage
	since := make([]time.Time, 3)
	for d := time.Duration(0); d <= sec(16); d += nodeProbeEvery {
		s.observe(since, []bool{up(d, node1...), up(d, node2...), up(d, node3...)}, at(d))
		want := int32(1)
		if d >= sec(12)+nodeSettle {
			want = 0
		}
		if got := s.cur.Load(); got != want {
			t.Fatalf("at %v: the writes on node %d, want node %d (node 1 ready %v, node 2 %v, node 3 %v)",
				d, got+1, want+1, up(d, node1...), up(d, node2...), up(d, node3...))
		}
	}
}
