package systemtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// desiredLog is what dedup publishes on the desired stream, as it comes.
type desiredLog struct {
	mu      sync.Mutex
	marks   []events.DesiredComplete
	desired []events.DesiredState
}

func watchDesired(t *testing.T, js jetstream.JetStream) *desiredLog {
	t.Helper()
	l := &desiredLog{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, err := events.Watch(ctx, js, events.StreamDesired, []string{events.SubjectDesired + ".>"}, func(m events.Received) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if m.Subject == events.DesiredCompleteSubject() {
			var c events.DesiredComplete
			if err := events.Decode(m, &c); err != nil {
				t.Error(err)
			}
			l.marks = append(l.marks, c)
			return
		}
		var d events.DesiredState
		if err := events.Decode(m, &d); err != nil {
			t.Error(err)
		}
		l.desired = append(l.desired, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// since returns the marks and desired states from the given counts on,
// and the counts now.
func (l *desiredLog) since(marks, desired int) ([]events.DesiredComplete, []events.DesiredState, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.marks[marks:]), slices.Clone(l.desired[desired:]), len(l.marks), len(l.desired)
}

// runDedup runs dedup in this process, once it has replayed the sources
// stream (so that what follows is live), until the returned stop is called.
func runDedup(t *testing.T, js jetstream.JetStream) (stop func()) {
	t.Helper()
	d, err := dedup.New(dedup.Config{Heartbeat: 100 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx, js) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	waitUntil(t, "dedup caught up", 10*time.Second, d.Ready)
	return stop
}

// announceSynced publishes a collector's synced mark, as a collector of
// cluster watching services does at every heartbeat.
func announceSynced(t *testing.T, js jetstream.JetStream, cluster string) {
	t.Helper()
	id := events.CollectorID([]string{"service"}, "")
	mark := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: cluster, Collector: id, Sources: []string{"service"}},
		Run: "r1", Phase: events.PhaseSynced, LeaseMillis: time.Minute.Milliseconds()}
	if _, _, err := events.Publish(context.Background(), js, events.CollectorSubject(cluster, id), mark, ""); err != nil {
		t.Fatal(err)
	}
}

// TestLostClusterHoldsCompletenessUntilRetired: clusters a, b and c are
// synced and the desired state complete; the sources stream loses b's and
// c's messages (a purge of their subjects) and dedup restarts before their
// next heartbeat. Who must be synced survives the stream: a alone saying
// synced makes nothing complete, and b's and c's names are not published
// as unwanted. Only `zonestream cluster retire` (which finds nothing of
// them on the sources stream) lets them go: c retired while dedup runs,
// b while dedup is down.
func TestLostClusterHoldsCompletenessUntilRetired(t *testing.T) {
	bus := natsenv.StartT(t)
	_, js := natsenv.Connect(t, bus.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"a": "www.example.org", "b": "web.example.org", "c": "api.example.org"}
	for cluster, name := range names {
		ref := events.ObjectRef{Cluster: cluster, Source: "service", Namespace: "default", Name: "svc"}
		src := &events.SourceState{Object: ref, Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.1")}}
		if _, _, err := events.Publish(ctx, js, ref.Subject(), src, ""); err != nil {
			t.Fatal(err)
		}
	}
	log := watchDesired(t, js)
	stop := runDedup(t, js)
	for cluster := range names {
		announceSynced(t, js, cluster)
	}
	marksAt, desiredAt := 0, 0
	completeWith := func(clusters ...string) func() error {
		return func() error {
			marks, _, _, _ := log.since(marksAt, desiredAt)
			if n := len(marks); n > 0 && marks[n-1].Complete && slices.Equal(marks[n-1].Clusters, clusters) {
				return nil
			}
			return fmt.Errorf("not complete with %v", clusters)
		}
	}
	// kept fails the test if dedup said complete or published one of
	// names since marksAt, desiredAt.
	kept := func(names ...string) {
		t.Helper()
		marks, desired, _, _ := log.since(marksAt, desiredAt)
		for _, m := range marks {
			if m.Complete {
				t.Fatalf("complete without the clusters whose messages the sources stream lost: %+v", m)
			}
		}
		for _, d := range desired {
			if slices.Contains(names, d.DNSName) {
				t.Fatalf("%s published as %d endpoints while its cluster has not said synced: %+v", d.DNSName, len(d.Endpoints), d)
			}
		}
	}
	// unwanted tells whether name was published as wanted by nobody since
	// marksAt, desiredAt.
	unwanted := func(name string) error {
		_, desired, _, _ := log.since(marksAt, desiredAt)
		if i := slices.IndexFunc(desired, func(d events.DesiredState) bool { return d.DNSName == name }); i < 0 || len(desired[i].Endpoints) > 0 {
			return fmt.Errorf("%s not published as unwanted", name)
		}
		return nil
	}
	waitUntil(t, "complete with every cluster", 10*time.Second, completeWith("a", "b", "c"))
	stop()

	sources, err := js.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range []string{"b", "c"} {
		if err := sources.Purge(ctx, jetstream.WithPurgeSubject(events.SourceFilter(cluster))); err != nil {
			t.Fatal(err)
		}
	}
	_, _, marksAt, desiredAt = log.since(0, 0)
	stop = runDedup(t, js)
	announceSynced(t, js, "a")
	// Several heartbeats: time for dedup to say complete if it would.
	time.Sleep(time.Second)
	kept("web.example.org", "api.example.org")

	// c retired while dedup runs: its name goes, b still holds completeness.
	if _, err := cli.RetireCluster(ctx, js, "c", false, time.Now()); err != nil {
		t.Fatalf("retire c: %v", err)
	}
	waitUntil(t, "c's name gone", 10*time.Second, func() error { return unwanted("api.example.org") })
	time.Sleep(time.Second)
	kept("web.example.org")

	// b retired while dedup is down: the restarted dedup reads it back.
	stop()
	if _, err := cli.RetireCluster(ctx, js, "b", false, time.Now()); err != nil {
		t.Fatalf("retire b: %v", err)
	}
	_, _, marksAt, desiredAt = log.since(0, 0)
	runDedup(t, js)
	announceSynced(t, js, "a")
	waitUntil(t, "complete with a alone", 10*time.Second, completeWith("a"))
	waitUntil(t, "b's name gone", 10*time.Second, func() error { return unwanted("web.example.org") })
}

// collectorPhases records every mark the collectors of cluster publish.
type collectorPhases struct {
	mu    sync.Mutex
	marks []events.CollectorState
}

func watchCollectors(t *testing.T, js jetstream.JetStream, cluster string) *collectorPhases {
	t.Helper()
	p := &collectorPhases{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	filter := strings.TrimSuffix(events.CollectorSubject(cluster, "x"), "x") + "*"
	_, err := events.Watch(ctx, js, events.StreamSources, []string{filter}, func(m events.Received) {
		var cs events.CollectorState
		if err := events.Decode(m, &cs); err != nil {
			t.Error(err)
			return
		}
		p.mu.Lock()
		p.marks = append(p.marks, cs)
		p.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// since returns the marks from the given count on, and the count now.
func (p *collectorPhases) since(n int) ([]events.CollectorState, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.marks[n:]), len(p.marks)
}

// TestNamespaceCollectorsOfOneClusterStaySynced: two collectors of one
// cluster watch the same sources in disjoint namespaces (--namespace=
// team-a, team-b), each under the credentials nats-config generates for
// the cluster. They are different collectors: neither retires the
// other's mark, both reach synced and stay synced, and dedup completes
// and stays complete.
func TestNamespaceCollectorsOfOneClusterStaySynced(t *testing.T) {
	cluster := kube.StartT(t)
	b := startSecuredBus(t, []string{"k"}, []string{"rfc2136"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	teams := []string{"team-a", "team-b"}
	for i, team := range teams {
		if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: team, Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": team + ".example.org"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}},
				AllocateLoadBalancerNodePorts: new(false)},
		}
		created, err := cluster.Client.CoreV1().Services(team).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: burstIP(i)}}
		if _, err := cluster.Client.CoreV1().Services(team).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	operator, _ := b.connectAs(t, events.OperatorPermissions())
	phases := watchCollectors(t, operator, "k")
	desired := watchDesired(t, operator)

	common := append([]string{"--nats-url=" + b.url, "--metrics-address=127.0.0.1:0", "--heartbeat-interval=200ms"}, fastLease...)
	procs := []*process{startProcess(t, "dedup", append(append([]string{"dedup"}, common...), b.flags(events.DedupPermissions())...)...)}
	var ids []string
	seen := 0
	for _, team := range teams {
		// One after the other: the second starts while the first is synced,
		// as when one of them restarts.
		_, seen = phases.since(0)
		args := append(append([]string{"collector"}, common...), "--kubeconfig="+cluster.Kubeconfig, "--source=service",
			"--cluster-name=k", "--namespace="+team)
		procs = append(procs, startProcess(t, "collector-"+team, append(args, b.flags(events.CollectorPermissions("k"))...)...))
		ids = append(ids, events.CollectorID([]string{"service"}, team))
		waitUntil(t, "dedup complete with "+strings.Join(ids, " and "), time.Minute, func() error {
			marks, _, _, _ := desired.since(0, 0)
			if len(marks) == 0 {
				return errors.New("no mark yet")
			}
			last := marks[len(marks)-1]
			var named []string
			for _, c := range last.Collectors {
				named = append(named, c.Collector)
			}
			if !last.Complete || !slices.Equal(named, ids) {
				return fmt.Errorf("last mark %+v", last)
			}
			return nil
		})
	}
	_, _, marksAt, _ := desired.since(0, 0)
	// Fifteen heartbeats: time for a retired collector to notice and
	// start its run again, and retire the other in turn.
	time.Sleep(3 * time.Second)
	later, _ := phases.since(seen)
	starts := 0 // the second collector's one run says syncing first
	for _, cs := range later {
		if cs.Collector == ids[1] && cs.Phase == events.PhaseSyncing && starts == 0 {
			starts++
			continue
		}
		if cs.Phase != events.PhaseSynced {
			t.Errorf("once %s was synced, collector %s said %s", ids[0], cs.Collector, cs.Phase)
		}
	}
	marks, _, _, _ := desired.since(marksAt, 0)
	if len(marks) == 0 {
		t.Fatal("dedup renewed no mark")
	}
	for _, m := range marks {
		if !m.Complete {
			t.Fatalf("completeness withdrawn while both collectors run: %s", m.Reason)
		}
	}
	noViolations(t, procs...)
}
