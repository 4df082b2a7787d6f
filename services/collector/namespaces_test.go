package collector_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// TestSeveralNamespaces: --namespace given twice (ExternalDNS v0.24) runs a
// collector per namespace: the objects of both are published, those of a
// third namespace are not, each namespace has its own synced mark, and a
// Node (cluster-scoped) is published by one of them only.
func TestSeveralNamespaces(t *testing.T) {
	const clusterName = "several-namespaces"
	a, b, other := collectortest.NewNamespace(t), collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	for _, ns := range []string{a, b, other} {
		collectortest.CreateService(t, ns, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": "web." + ns + ".example.org"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}, corev1.LoadBalancerIngress{IP: "192.0.2.1"})
	}
	collectortest.CreateNode(t, a, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + a}}, collectortest.ExternalIP("192.0.2.9"))

	var cfg collector.Config
	for _, ns := range []string{b, a} {
		if err := cfg.Namespaces.Set(ns); err != nil {
			t.Fatal(err)
		}
	}
	cfg.ClusterName, cfg.Sources, cfg.Workers = clusterName, []string{"service", "node"}, 1
	cfg.LabelFilter = "" // the Node's case label is not on the Services
	cfg.RESTConfig = collectortest.Cluster.Config
	r, err := collector.NewForNamespaces(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, collectortest.JS) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	}()
	deadline := time.Now().Add(collectortest.WaitFor)
	for r.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v", r.Ready())
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, ns := range []string{a, b} {
		collectortest.WaitState(t, collectortest.ServiceSubject(clusterName, ns, "web"),
			[]events.Endpoint{collectortest.EP("web."+ns+".example.org", "A", "192.0.2.1")})
	}
	if s, ok := collectortest.LastState(t, collectortest.ServiceSubject(clusterName, other, "web")); ok {
		t.Fatalf("a namespace not given was published: %v", collectortest.Render(s.Endpoints))
	}
	// The first namespace in order runs the node source, the other not.
	first, second := min(a, b), max(a, b)
	for id, want := range map[string]bool{
		events.CollectorID([]string{"node", "service"}, first):  true,
		events.CollectorID([]string{"service"}, second):         true,
		events.CollectorID([]string{"node", "service"}, second): false,
	} {
		if n := collectortest.Count(t, events.CollectorSubject(clusterName, id)); (n > 0) != want {
			t.Errorf("collector %s: %d marks, want any: %v", id, n, want)
		}
	}
	nodeSubject := events.ObjectRef{Cluster: clusterName, Source: "node", Name: "node-" + a}.Subject()
	collectortest.WaitState(t, nodeSubject, []events.Endpoint{collectortest.EP("node-"+a, "A", "192.0.2.9")})
	if n := collectortest.Count(t, nodeSubject); n != 1 {
		t.Errorf("the Node was published %d times, want once", n)
	}
}
