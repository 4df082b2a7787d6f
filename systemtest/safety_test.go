package systemtest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// svcRange names svc-from .. svc-(to-1), as createServices makes them.
func svcRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "svc-"+strconv.Itoa(i))
	}
	return out
}

// zoneOf is burstZone for the Services named, in any order.
func zoneOf(zone, owner string, names []string) []string {
	want := []string{"@ NS ns." + zone, "ns A 127.0.0.1", "legacy A 192.0.2.99"}
	for _, name := range names {
		i, _ := strconv.Atoi(strings.TrimPrefix(name, "svc-"))
		want = append(want, name+" A "+burstIP(i),
			"a-"+name+" TXT heritage=external-dns,external-dns/owner="+owner+",external-dns/resource=service/default/"+name)
	}
	return sorted(want)
}

// externalDNSWrites does to BIND what ExternalDNS with owner does for the
// Services named: their A records and ownership TXT, created or removed.
func externalDNSWrites(t *testing.T, ns *bind.Server, zone, owner string, names []string, remove bool) {
	t.Helper()
	var rrs []dns.RR
	for _, name := range names {
		i, _ := strconv.Atoi(strings.TrimPrefix(name, "svc-"))
		for _, text := range []string{
			name + "." + zone + ". 300 IN A " + burstIP(i),
			"a-" + name + "." + zone + `. 300 IN TXT "heritage=external-dns,external-dns/owner=` + owner +
				",external-dns/resource=service/default/" + name + `"`,
		} {
			rr, err := dns.NewRR(text)
			if err != nil {
				t.Fatal(err)
			}
			rrs = append(rrs, rr)
		}
	}
	var err error
	if remove {
		err = ns.Update(zone, nil, rrs)
	} else {
		err = ns.Update(zone, rrs, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// deletedWanted lists the deletes the tap saw of records of the Services
// named.
func (tap *planTap) deletedWanted(names []string) []string {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var out []string
	for _, d := range tap.deletes {
		for _, n := range names {
			if strings.HasPrefix(d, n+".") {
				out = append(out, d)
			}
		}
	}
	return out
}

// TestRestartOnStateOlderThanTheCluster: zonestream stops; while it is down
// Services go and come and ExternalDNS, with the same owner id, takes the
// zone over; zonestream starts again on its old state. Nothing wanted is
// deleted for a moment, and nothing gone is brought back: the old run's
// completeness marks are history, not permission.
func TestRestartOnStateOlderThanTheCluster(t *testing.T) {
	const zone, owner = "restart.test", "x"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t) // the state that outlives the process
	tap := tapPlans(t, bus.ClientURL())
	args := append([]string{"--nats-url=" + bus.ClientURL(), "--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--metrics-address=127.0.0.1:0", "--interval=2s", "--heartbeat-interval=1s"}, append(fastLease, rfc2136Flags(ns, zone, owner)...)...)
	zs := startProcess(t, "zonestream", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, 0, 5); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(0, 5)), time.Minute)
	zs.kill()

	// While zonestream is down: two Services go, ExternalDNS removes their
	// records; ten new ones come, ExternalDNS writes theirs as owner x.
	for _, name := range svcRange(0, 2) {
		if err := cluster.Client.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	externalDNSWrites(t, ns, zone, owner, svcRange(0, 2), true)
	if err := createServices(ctx, cluster.Client, zone, 5, 15); err != nil {
		t.Fatal(err)
	}
	externalDNSWrites(t, ns, zone, owner, svcRange(5, 15), false)
	wanted := svcRange(2, 15)
	want := zoneOf(zone, owner, wanted)
	if got := zoneContents(t, ns, zone); !slices.Equal(got, want) {
		t.Fatalf("setup: BIND holds %v", got)
	}

	tap.mu.Lock()
	tap.creates, tap.deletes = nil, nil // only what the restarted run plans
	tap.mu.Unlock()
	zs.start()
	// Watch BIND closely through the restart: no wanted record may go,
	// not even for a moment, and no gone one may come back.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if missing, extra := diff(want, zoneContents(t, ns, zone)); len(missing)+len(extra) > 0 {
			t.Fatalf("after the restart BIND lost %v and gained %v", missing, extra)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := tap.deletedWanted(wanted); len(d) > 0 {
		t.Fatalf("plans deleted records of Services that exist: %v", head(d))
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for _, c := range tap.creates {
		if strings.HasPrefix(c, "svc-0.") || strings.HasPrefix(c, "svc-1.") {
			t.Fatalf("a plan re-created the record of a deleted Service: %s", c)
		}
	}
}

// TestSourcesStreamLossDeletesNothing: the sources stream is purged (or
// lost with its node) while the desired stream survives, and dedup
// restarts on the empty stream. No record is deleted: dedup withdraws
// completeness, the collector notices its state is gone and publishes it
// again, and only then may anything be deleted, which the last step
// shows still works.
func TestSourcesStreamLossDeletesNothing(t *testing.T) {
	const zone, owner = "loss.test", "loss"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	tap := tapPlans(t, bus.ClientURL())
	p := startStages(t, bus.ClientURL(), cluster, "loss", rfc2136Flags(ns, zone, owner), "--interval=2s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, 0, 20); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(0, 20)), time.Minute)

	_, js := natsenv.Connect(t, bus.ClientURL())
	st, err := js.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	dedup := p.stage("dedup")
	dedup.kill()
	dedup.start()
	deadline := time.Now().Add(10 * time.Second)
	want := zoneOf(zone, owner, svcRange(0, 20))
	for time.Now().Before(deadline) {
		if missing, _ := diff(want, zoneContents(t, ns, zone)); len(missing) > 0 {
			t.Fatalf("after the sources stream was lost BIND lost %v", head(missing))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := tap.deletedWanted(svcRange(0, 20)); len(d) > 0 {
		t.Fatalf("plans deleted wanted records: %v", head(d))
	}
	// Deletes resume once the collector has published everything again.
	if err := cluster.Client.CoreV1().Services("default").Delete(ctx, "svc-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(1, 20)), time.Minute)
}

// TestRetiredClusterLosesItsRecordsAndNoOneElse: a cluster whose collector
// is gone keeps its records (deletes are held, not done); once the
// operator retires it, its records go and the others' stay.
func TestRetiredClusterLosesItsRecordsAndNoOneElse(t *testing.T) {
	const zone, owner = "retire.test", "retire"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	startStages(t, bus.ClientURL(), cluster, "a", rfc2136Flags(ns, zone, owner), "--interval=2s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := createServices(ctx, cluster.Client, zone, 0, 4); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(0, 4)), time.Minute)

	// Cluster b: a second collector publishes what "its" objects want,
	// directly on the bus, then falls silent.
	_, js := natsenv.Connect(t, bus.ClientURL())
	ref := events.ObjectRef{Cluster: "b", Source: "service", Namespace: "default", Name: "svc-9"}
	b := &events.SourceState{Object: ref, Endpoints: []events.Endpoint{events.NewEndpoint("svc-9."+zone, "A", 0, burstIP(9))}}
	mark := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: "b", Collector: "service",
		Sources: []string{"service"}}, Run: "r1",
		Phase: events.PhaseSyncing, LeaseMillis: 1500}
	for _, step := range []func() error{
		func() error {
			_, _, err := events.Publish(ctx, js, events.CollectorSubject("b", "service"), mark, "")
			return err
		},
		func() error { _, _, err := events.Publish(ctx, js, ref.Subject(), b, ""); return err },
		func() error {
			mark.Phase = events.PhaseSynced
			_, _, err := events.Publish(ctx, js, events.CollectorSubject("b", "service"), mark, "")
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	both := zoneOf(zone, owner, append(svcRange(0, 4), "svc-9"))
	waitZone(t, ns, zone, both, time.Minute)

	// b falls silent: once its lease lapsed, dedup withdraws completeness.
	// Then a's Service goes: the delete is held, and b's record stays.
	waitUntil(t, "cluster b's lease to lapse", 30*time.Second, func() error {
		st, err := js.Stream(ctx, events.StreamDesired)
		if err != nil {
			return err
		}
		m, err := st.GetLastMsgForSubject(ctx, events.DesiredCompleteSubject())
		if err != nil {
			return err
		}
		var c events.DesiredComplete
		if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &c); err != nil {
			return err
		}
		if c.Complete {
			return errors.New("still complete")
		}
		return nil
	})
	if err := cluster.Client.CoreV1().Services("default").Delete(ctx, "svc-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if got := zoneContents(t, ns, zone); !slices.Equal(got, both) {
		t.Fatalf("with cluster b silent, BIND changed: %v", got)
	}

	// Retired: b's record goes, and a's deleted Service's; a's others stay.
	if _, err := cli.RetireCluster(ctx, js, "b", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitZone(t, ns, zone, zoneOf(zone, owner, svcRange(1, 4)), time.Minute)
}
