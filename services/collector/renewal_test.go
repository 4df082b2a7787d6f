package collector_test

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// TestRenewsItsMarkWhenAsked: a stage that has just started (dedup)
// trusts only marks published since; a synced collector renews its mark
// as soon as asked, not at its next heartbeat.
func TestRenewsItsMarkWhenAsked(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	c, err := collector.New(collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config,
		Sources: []string{"service"}, Heartbeat: time.Hour}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollectorOn(t, c, bus)
	mark := events.CollectorSubject(ns, events.CollectorID([]string{"service"}, ns))
	waitPhase(t, bus, mark, events.PhaseSynced)
	first := markSeq(t, bus, mark)
	if err := events.RequestRenewal(bus, events.RenewCollectorsSubject()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(collectortest.WaitFor)
	for markSeq(t, bus, mark) == first {
		if time.Now().After(deadline) {
			t.Fatalf("the synced mark was not renewed within %s of the request (heartbeat: an hour)", collectortest.WaitFor)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitPhase(t, bus, mark, events.PhaseSynced)
}
