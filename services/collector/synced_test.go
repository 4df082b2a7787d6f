package collector_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// TestCollectorMarkBracketsEveryRun: every run says "syncing" before any
// object it publishes and "synced" only after all of them, so dedup never
// takes a run half done, or a run of the past, for a synced cluster.
func TestCollectorMarkBracketsEveryRun(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	const clusterName = "synced-mark"
	for _, name := range []string{"a", "b", "c"} {
		collectortest.CreateService(t, ns, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": name + ".example.org"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}, corev1.LoadBalancerIngress{IP: "192.0.2.1"})
	}
	mark := events.CollectorSubject(clusterName, events.CollectorID([]string{"service"}, ns))
	st, err := collectortest.JS.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	synced := func() (events.CollectorState, uint64) {
		t.Helper()
		deadline := time.Now().Add(collectortest.WaitFor)
		for {
			m, err := st.GetLastMsgForSubject(t.Context(), mark)
			if err == nil {
				var cs events.CollectorState
				if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &cs); err != nil {
					t.Fatal(err)
				}
				if cs.Phase == events.PhaseSynced {
					return cs, m.Sequence
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no synced mark after the first pass")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r := collectortest.StartCollector(t, collector.Config{ClusterName: clusterName, Namespace: ns})
	first, seq := synced()
	if first.Cluster != clusterName || !slices.Equal(first.Sources, []string{"service"}) || first.Namespace != ns || first.Run == "" {
		t.Fatalf("synced mark %+v", first)
	}
	for _, name := range []string{"a", "b", "c"} {
		obj, err := st.GetLastMsgForSubject(t.Context(), collectortest.ServiceSubject(clusterName, ns, name))
		if err != nil {
			t.Fatalf("%s not published: %v", name, err)
		}
		if obj.Sequence > seq {
			t.Fatalf("%s published after the synced mark", name)
		}
	}
	// The first mark of the run was "syncing", before every object.
	var phases []string
	forEach(t, mark, func(m events.Received) {
		var cs events.CollectorState
		if events.Decode(m, &cs) == nil && cs.Run == first.Run {
			phases = append(phases, cs.Phase)
		}
	})
	if len(phases) < 2 || phases[0] != events.PhaseSyncing {
		t.Fatalf("phases of the run %v, want syncing first", phases)
	}

	// A restart is a new run: it says syncing again, then synced, without
	// publishing unchanged objects again.
	before := collectortest.Count(t, collectortest.ServiceSubject(clusterName, ns, "a"))
	r.Stop()
	collectortest.StartCollector(t, collector.Config{ClusterName: clusterName, Namespace: ns})
	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		if again, _ := synced(); again.Run != first.Run {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restarted collector never said it synced")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := collectortest.Count(t, collectortest.ServiceSubject(clusterName, ns, "a")); n != before {
		t.Fatalf("a restart with nothing changed published %d more states", n-before)
	}
}

// forEach calls fn with every message published on subj, oldest first.
func forEach(t *testing.T, subj string, fn func(events.Received)) {
	t.Helper()
	for _, r := range collectortest.History(t, subj) {
		fn(r)
	}
}
