package planner

import (
	"context"
	"testing"

	"github.com/zonestream/zonestream/events"
)

// TestCompleteMarkThatDropsACollectorIsRefused: the defence behind dedup.
// A complete mark that leaves out a collector named by the mark read back
// at start, or by the last complete mark trusted, is refused (deletes
// stay held) unless it lists that collector, or its cluster, as retired.
func TestCompleteMarkThatDropsACollectorIsRefused(t *testing.T) {
	s := freshRun(t, nil, Config{})
	ref := func(cluster, id string) events.CollectorRef {
		return events.CollectorRef{Cluster: cluster, Collector: id, Sources: []string{id}}
	}
	a, b, ing := ref("a", "service"), ref("b", "service"), ref("a", "ingress")
	fold := func(live bool, c *events.DesiredComplete) bool {
		t.Helper()
		msg, err := events.Message(events.DesiredCompleteSubject(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		s.fold(context.Background(), events.Received{Subject: msg.Subject, Header: msg.Header, Data: msg.Data, Seq: 1, Live: live})
		return s.complete
	}
	complete := func(collectors ...events.CollectorRef) *events.DesiredComplete {
		return &events.DesiredComplete{Complete: true, Collectors: collectors}
	}

	// History adds requirements and allows nothing.
	if fold(false, complete(a, b)) {
		t.Fatal("a mark read back from history allowed deletes")
	}
	if fold(true, complete(a)) {
		t.Fatal("a complete mark without b, named by the mark read back, allowed deletes")
	}
	if !fold(true, complete(a, b)) {
		t.Fatal("a complete mark naming every required collector was refused")
	}
	if !fold(true, complete(a, b, ing)) {
		t.Fatal("a complete mark with a new collector was refused")
	}
	if fold(true, complete(a, b)) {
		t.Fatal("a complete mark that silently drops a's ingress collector, trusted before, allowed deletes")
	}
	c := complete(a)
	c.RetiredCollectors, c.RetiredClusters = []events.CollectorRef{ing}, []string{"b"}
	if !fold(true, c) {
		t.Fatal("a complete mark without the collectors it lists as retired was refused")
	}
	if !fold(true, complete(a)) {
		t.Fatal("once a complete mark without them was trusted, the retired collectors are still required")
	}
}
