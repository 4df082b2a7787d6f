package collector_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
)

// TestSyncedMarkAfterFirstPass: the cluster's sync mark, which lets the
// planner delete, comes after the state of every object, once per
// content: a restart does not repeat it.
func TestSyncedMarkAfterFirstPass(t *testing.T) {
	ns := newNamespace(t)
	const clusterName = "synced-mark"
	for _, name := range []string{"a", "b", "c"} {
		createService(t, ns, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": name + ".example.org"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}, corev1.LoadBalancerIngress{IP: "192.0.2.1"})
	}
	mark := events.SourcesSyncedSubject(clusterName)
	r := startCollector(t, collector.Config{ClusterName: clusterName, Namespace: ns})
	deadline := time.Now().Add(waitFor)
	for count(t, mark) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no sync mark after the first pass")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := js.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	markMsg, err := st.GetLastMsgForSubject(t.Context(), mark)
	if err != nil {
		t.Fatal(err)
	}
	var synced events.SourcesSynced
	if err := events.Unmarshal(markMsg.Header, markMsg.Data, &synced); err != nil || synced.Cluster != clusterName {
		t.Fatalf("sync mark %+v, %v", synced, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		obj, err := st.GetLastMsgForSubject(t.Context(), subject(clusterName, ns, name))
		if err != nil {
			t.Fatalf("%s not published: %v", name, err)
		}
		if obj.Sequence > markMsg.Sequence {
			t.Fatalf("%s published after the sync mark", name)
		}
	}
	r.stop()
	startCollector(t, collector.Config{ClusterName: clusterName, Namespace: ns})
	time.Sleep(300 * time.Millisecond)
	if n := count(t, mark); n != 1 {
		t.Fatalf("%d sync marks after a restart with nothing changed, want 1", n)
	}
}
