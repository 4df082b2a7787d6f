package collector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// ownBus is a JetStream of the test's own, for what must not touch the
// shared one (a purge, a small payload limit).
func ownBus(t *testing.T, options ...natsenv.Option) jetstream.JetStream {
	t.Helper()
	s := natsenv.StartT(t, options...)
	_, bus := natsenv.Connect(t, s.ClientURL())
	if err := events.EnsureStreams(t.Context(), bus); err != nil {
		t.Fatal(err)
	}
	return bus
}

// TestClusterNameBoundToOneCluster: a collector whose --cluster-name is
// held by another Kubernetes cluster refuses to start, says why, and
// publishes nothing (it would read the other cluster's objects back as its
// own and tombstone them all).
func TestClusterNameBoundToOneCluster(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("web", "web.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	claim := &events.ClusterClaim{Cluster: ns, UID: "uid-of-another-cluster"}
	if _, _, err := events.Publish(t.Context(), collectortest.JS, events.ClaimSubject(ns), claim, ""); err != nil {
		t.Fatal(err)
	}
	refused := testutil.ToFloat64(collector.ClaimRefusedMetric())
	c, err := collector.New(collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config,
		Sources: []string{"service"}}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), collectortest.WaitFor)
	defer cancel()
	err = c.Run(ctx, collectortest.JS)
	if !errors.Is(err, collector.ErrClusterNameTaken) || !strings.Contains(err.Error(), "uid-of-another-cluster") {
		t.Fatalf("Run returned %v, want ErrClusterNameTaken naming the holder", err)
	}
	if got := testutil.ToFloat64(collector.ClaimRefusedMetric()); got != refused+1 {
		t.Errorf("refusals counted %v -> %v", refused, got)
	}
	for subj := range collectortest.SubjectCounts(t, events.SourceFilter(ns)) {
		if subj != events.ClaimSubject(ns) {
			t.Errorf("a refused collector published %s", subj)
		}
	}
}

// TestObjectTooLargeForTheBus: an object whose state does not fit in one
// message gets a Warning Event and a metric, keeps whatever it had, and
// holds back neither other objects nor the collector's synced mark.
func TestObjectTooLargeForTheBus(t *testing.T) {
	bus := ownBus(t, natsenv.WithMaxPayload(8<<10))
	ns := collectortest.NewNamespace(t)
	var hosts []string
	for i := range 400 {
		hosts = append(hosts, fmt.Sprintf("host-%03d.big.example.org", i))
	}
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("big", strings.Join(hosts, ","), nil), collectortest.LoadBalancerIP("192.0.2.1"))
	refusedAlone(t, bus, ns, "big", "TooLarge") // ready: the first pass is done despite big
	waitPhase(t, bus, events.CollectorSubject(ns, events.CollectorID([]string{"service"}, ns)), events.PhaseSynced)
}

// TestLostStreamIsPublishedAgain: when the sources stream loses what the
// collector published (purged, or lost with its node), the collector
// notices at its next heartbeat and publishes every object again, saying
// syncing first, so nothing downstream takes the empty stream for a
// cluster that wants nothing.
func TestLostStreamIsPublishedAgain(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("a", "a.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("b", "b.example.org", nil), collectortest.LoadBalancerIP("192.0.2.2"))
	lost := testutil.ToFloat64(collector.StreamLostMetric())
	mark := startSynced(t, bus, ns)
	st, _ := bus.Stream(t.Context(), events.StreamSources)
	if err := st.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(collectortest.WaitFor)
	for _, name := range []string{"a", "b"} {
		for {
			if _, err := st.GetLastMsgForSubject(t.Context(), collectortest.ServiceSubject(ns, ns, name)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not published again after the stream was purged", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitPhase(t, bus, mark, events.PhaseSynced)
	if got := testutil.ToFloat64(collector.StreamLostMetric()); got <= lost {
		t.Errorf("stream_lost_total did not grow")
	}
}

// TestSupersededCollectorMarkIsRetired: a collector whose sources were
// reconfigured gets a new id; the old id's mark, never renewed again,
// would hold every delete back, so the new collector retires it.
func TestSupersededCollectorMarkIsRetired(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	old := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: ns,
		Collector: events.CollectorID([]string{"ingress", "service"}, ""), Sources: []string{"ingress", "service"}}, Run: "r0", Phase: events.PhaseSynced, LeaseMillis: 90000}
	oldSubject := events.CollectorSubject(ns, old.Collector)
	if _, _, err := events.Publish(t.Context(), bus, oldSubject, old, ""); err != nil {
		t.Fatal(err)
	}
	c, err := collector.New(collector.Config{ClusterName: ns, RESTConfig: collectortest.Cluster.Config, Sources: []string{"service"},
		Namespace: ns}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollectorOn(t, c, bus)
	waitPhase(t, bus, oldSubject, events.PhaseRetired)
}

// waitPhase waits until the last mark on subj says phase.
func waitPhase(t *testing.T, bus jetstream.JetStream, subj, phase string) {
	t.Helper()
	st, err := bus.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		var cs events.CollectorState
		m, err := st.GetLastMsgForSubject(t.Context(), subj)
		if err == nil && events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &cs) == nil && cs.Phase == phase {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said %s (last: %+v, %v)", subj, phase, cs, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRetiredWhileRunningPublishesAgain: an operator retires a cluster
// (with --force) whose collector still runs: its objects were tombstoned,
// so the collector publishes them all again rather than let their records
// go.
func TestRetiredWhileRunningPublishesAgain(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("a", "a.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	mark := startSynced(t, bus, ns)
	// What zonestream cluster retire --force does.
	ref := events.ObjectRef{Cluster: ns, Source: "service", Namespace: ns, Name: "a"}
	if _, _, err := events.Publish(t.Context(), bus, ref.Subject(), &events.SourceState{Object: ref}, ""); err != nil {
		t.Fatal(err)
	}
	retired := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: ns,
		Collector: events.CollectorID([]string{"service"}, ns), Sources: []string{"service"}, Namespace: ns}, Phase: events.PhaseRetired}
	if _, _, err := events.Publish(t.Context(), bus, mark, retired, ""); err != nil {
		t.Fatal(err)
	}
	st, _ := bus.Stream(t.Context(), events.StreamSources)
	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		m, err := st.GetLastMsgForSubject(t.Context(), ref.Subject())
		var s events.SourceState
		if err == nil && events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &s) == nil && !s.IsTombstone() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running collector did not publish its object again after being retired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitPhase(t, bus, mark, events.PhaseSynced)
}

// startSynced runs a service collector of cluster and namespace ns on bus,
// renewing its mark every 200ms, and returns the mark's subject once it
// says synced.
func startSynced(t *testing.T, bus jetstream.JetStream, ns string) string {
	t.Helper()
	c, err := collector.New(collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config,
		Sources: []string{"service"}, Heartbeat: 200 * time.Millisecond}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollectorOn(t, c, bus)
	mark := events.CollectorSubject(ns, events.CollectorID([]string{"service"}, ns))
	waitPhase(t, bus, mark, events.PhaseSynced)
	return mark
}

// TestObjectOverTheLimitsIsReportedNotPublished: an object whose endpoint
// has more targets than a reader takes (events.MaxTargets), though its
// message fits on the bus, is refused like one too large for it: a
// Warning Event and a metric, nothing published, nothing else held back.
func TestObjectOverTheLimitsIsReportedNotPublished(t *testing.T) {
	bus := ownBus(t)
	ns := collectortest.NewNamespace(t)
	targets := make([]string, events.MaxTargets+1)
	for i := range targets {
		targets[i] = fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)
	}
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("many", "many.example.org",
		map[string]string{collectortest.Alpha + "target": strings.Join(targets, ",")}))
	refusedAlone(t, bus, ns, "many", "TooLarge", "targets")
}

// refusedAlone creates a Service small beside Service name of ns and runs
// a collector of ns on bus: name gets a Warning Event saying all of want,
// too_large_total grows, and name is not published while small is.
func refusedAlone(t *testing.T, bus jetstream.JetStream, ns, name string, want ...string) {
	t.Helper()
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("small", "small.example.org", nil), collectortest.LoadBalancerIP("192.0.2.2"))
	before := testutil.ToFloat64(collector.TooLargeMetric("service"))
	c, err := collector.New(collector.Config{ClusterName: ns, Namespace: ns, RESTConfig: collectortest.Cluster.Config,
		Sources: []string{"service"}, Workers: 1}, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollectorOn(t, c, bus)
	msgs := collectortest.WaitObjectEvents(t, ns, "Service", name, 1)
	for _, w := range want {
		if !strings.Contains(msgs, w) {
			t.Fatalf("events on %s, want %q:\n%s", name, w, msgs)
		}
	}
	if got := testutil.ToFloat64(collector.TooLargeMetric("service")); got <= before {
		t.Errorf("too_large_total did not grow")
	}
	st, _ := bus.Stream(t.Context(), events.StreamSources)
	if _, err := st.GetLastMsgForSubject(t.Context(), collectortest.ServiceSubject(ns, ns, "small")); err != nil {
		t.Errorf("small not published: %v", err)
	}
	if _, err := st.GetLastMsgForSubject(t.Context(), collectortest.ServiceSubject(ns, ns, name)); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("%s: %v, want nothing published", name, err)
	}
}
