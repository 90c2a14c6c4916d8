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
