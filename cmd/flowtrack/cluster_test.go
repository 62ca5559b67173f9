package main

import (
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/cluster"
)

// TestPrintStatus: the text status marks late and dead nodes and the
// partitions they hold, says a moving partition and an electing stream,
// explains the replication columns and reads its durations as people
// write them.
func TestPrintStatus(t *testing.T) {
	st := &cluster.Status{Cluster: "c", Partitions: 3, LeaseTTL: 6 * time.Second,
		Nodes: []cluster.NodeStatus{
			{Name: "a", State: cluster.NodeLive, LeaseAge: 98*time.Millisecond + 421*time.Microsecond},
			{Name: "b", State: cluster.NodeLate, LeaseAge: 3540 * time.Millisecond},
			{Name: "c", State: cluster.NodeDead},
		},
		Owners: []cluster.PartitionStatus{
			{ID: 1, Owner: "a", OwnerState: cluster.NodeLive, LeaseAge: 1234567 * time.Microsecond, Leader: "n1", Replicas: 3, Current: 3},
			{ID: 2, Owner: "b", OwnerState: cluster.NodeLate, LeaseAge: 4 * time.Second, Leader: "n2", Replicas: 3, Current: 2, Lag: 17},
			{ID: 3, Replicas: 3},
		}}
	var out strings.Builder
	if err := printStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"3 partitions, lease TTL 6s, 2 live nodes, 1 dead",
		"a     live   98ms ago", "b     late   3.5s ago", "c     dead   lease expired",
		"1          a           1.2s ago", "b (late)", "- (moving)", "- (electing)", "2/3", "LAG is how many operations",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := printStatus(&out, &cluster.Status{Cluster: "c", Forming: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "forming") {
		t.Errorf("a forming cluster: %s", out.String())
	}
}
