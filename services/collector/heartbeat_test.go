package collector_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// TestSyncedHeartbeatReadsNothing: a synced collector renews its mark
// without reading it back; the renewal itself is conditional on the mark
// being its own. A read of the mark loads the stream's last block, which at
// rest with thousands of objects was most of the server's work.
func TestSyncedHeartbeatReadsNothing(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("a", "a.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	mark := startSynced(t, bus, ns) // a heartbeat every 200ms
	first := markSeq(t, bus, mark)
	reads := directGets(t, bus.Conn(), mark)
	time.Sleep(2 * time.Second)
	n := reads()
	if renewals := markSeq(t, bus, mark) - first; renewals < 5 {
		t.Fatalf("the mark moved %d sequences in 10 heartbeats, want it renewed about 10 times", renewals)
	}
	if n != 0 {
		t.Fatalf("the collector read its mark %d times in 10 heartbeats, want 0", n)
	}
}

// TestTwoCollectorsRenewOneMark: two processes with the same cluster and
// sources (replicas without election) renew the same mark. Each one's
// conditional renewal fails after the other's, and it then reads the mark,
// finds it synced by the other, and renews it: neither takes the other's
// mark for a lost stream.
func TestTwoCollectorsRenewOneMark(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("a", "a.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	lost := testutil.ToFloat64(collector.StreamLostMetric())
	mark := startSynced(t, bus, ns)
	startSynced(t, bus, ns)
	reads := directGets(t, bus.Conn(), mark)
	time.Sleep(2 * time.Second)
	if reads() == 0 {
		t.Fatal("no heartbeat read the mark, though two processes renew it")
	}
	if got := testutil.ToFloat64(collector.StreamLostMetric()); got != lost {
		t.Fatalf("a collector took the other's renewal for a lost stream (%v times)", got-lost)
	}
	waitPhase(t, bus, mark, events.PhaseSynced)
}

// markSeq is the stream sequence of the last message on subj.
func markSeq(t *testing.T, bus jetstream.JetStream, subj string) uint64 {
	t.Helper()
	st, err := bus.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(t.Context(), subj)
	if err != nil {
		t.Fatal(err)
	}
	return m.Sequence
}

// directGets counts, from now on, the direct-get requests for the last
// message on subj: every read of it by anyone on the server.
func directGets(t *testing.T, nc *nats.Conn, subj string) func() int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := nc.Subscribe("$JS.API.DIRECT.GET."+events.StreamSources+".>", func(m *nats.Msg) {
		if strings.HasSuffix(m.Subject, "."+subj) {
			n.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return n.Load
}
