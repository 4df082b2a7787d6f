package collector_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/testenv/kube"
)

// installCRD installs deploy/crds/dnsendpoint.yaml into the API server of
// cfg and waits until DNSEndpoints can be listed.
func installCRD(t *testing.T, cfg *rest.Config) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(crdDir, "dnsendpoint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	dc := collectortest.DynamicClient(t, cfg)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dc.Resource(crds).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		_, err := dc.Resource(collectortest.DNSEndpointGVR).List(t.Context(), metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("DNSEndpoints not served: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// status.observedGeneration follows the observed state: set once every
// endpoint of the current generation is held by a provider.
func TestCRDObservedGeneration(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	a, b := "a."+ns+".example.org", "b."+ns+".example.org"
	obj := collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("gen", collectortest.Entry(a, "A", "192.0.2.1"), collectortest.Entry(b, "CNAME", "lb.example.net")))
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "gen"), []events.Endpoint{collectortest.EP(a, "A", "192.0.2.1"), collectortest.EP(b, "CNAME", "lb.example.net")})

	observed := func(name string, recs ...events.Endpoint) {
		t.Helper()
		st := &events.ObservedState{Provider: "test-" + ns, Zone: ns + ".example.org", DNSName: name, Records: recs}
		if _, _, err := events.Publish(t.Context(), collectortest.JS, events.ObservedSubject(st.Provider, name), st, ""); err != nil {
			t.Fatal(err)
		}
	}
	observedGeneration := func() int64 {
		t.Helper()
		u, err := dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Get(t.Context(), "gen", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return g
	}
	waitGeneration := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(collectortest.WaitFor)
		for observedGeneration() != want {
			if time.Now().After(deadline) {
				t.Fatalf("status.observedGeneration %d, want %d", observedGeneration(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	stays := func(want int64) {
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		if g := observedGeneration(); g != want {
			t.Fatalf("status.observedGeneration %d, want it to stay %d", g, want)
		}
	}
	if obj.GetGeneration() != 1 {
		t.Fatalf("generation %d", obj.GetGeneration())
	}
	stays(0) // nothing observed yet
	observed(a, collectortest.EP(a, "A", "192.0.2.1"), collectortest.EP(a, "TXT", "heritage=external-dns"))
	stays(0) // b not yet held
	observed(b, collectortest.EP(b, "CNAME", "other.example.net"))
	stays(0) // b held with other targets
	observed(b, collectortest.EP(b, "CNAME", "lb.example.net"))
	waitGeneration(1)

	// A new generation: the status waits for its records.
	obj, err := dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Get(t.Context(), "gen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(obj.Object, []any{collectortest.Entry(a, "A", "192.0.2.2"), collectortest.Entry(b, "CNAME", "lb.example.net")}, "spec", "endpoints"); err != nil {
		t.Fatal(err)
	}
	if obj, err = dc.Resource(collectortest.DNSEndpointGVR).Namespace(ns).Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if obj.GetGeneration() != 2 {
		t.Fatalf("generation %d after update", obj.GetGeneration())
	}
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "gen"), []events.Endpoint{collectortest.EP(a, "A", "192.0.2.2"), collectortest.EP(b, "CNAME", "lb.example.net")})
	stays(1)
	observed(a, collectortest.EP(a, "A", "192.0.2.2"))
	waitGeneration(2)
}

// The CRD source must never tombstone what it published because the CRD
// is not served (at a restart, or on a cluster where it is not yet
// installed), and must start reading DNSEndpoints once the CRD appears,
// without a restart; only then are objects that really are gone
// tombstoned.
func TestCRDAppearsAndMissingAtRestart(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)

	// 1. A collector on the cluster with the CRD publishes X.
	r := collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("x", collectortest.Entry("x.example.org", "A", "192.0.2.1")))
	xSubj := collectortest.CRDSubject(ns, ns, "x")
	collectortest.WaitState(t, xSubj, []events.Endpoint{collectortest.EP("x.example.org", "A", "192.0.2.1")})
	r.Stop()
	published := collectortest.Count(t, xSubj)

	// 2. The same collector (cluster name, namespace) restarts against an
	// API server without the CRD: ready, and X keeps its state. The test's
	// second API server is a cluster of its own (its kube-system has
	// another UID): the name is released first, as an operator moving a
	// cluster name to a rebuilt cluster would.
	if _, _, err := events.Publish(t.Context(), collectortest.JS, events.ClaimSubject(ns), &events.ClusterClaim{Cluster: ns}, ""); err != nil {
		t.Fatal(err)
	}
	other := kube.StartT(t)
	if _, err := other.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := collectortest.CRDConfig(ns)
	cfg.RESTConfig = other.Config
	cfg.Workers = 1
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollector(t, c)
	time.Sleep(5 * collectortest.CRDPoll)
	if s, ok := collectortest.LastState(t, xSubj); !ok || s.IsTombstone() || collectortest.Count(t, xSubj) != published {
		t.Fatalf("X changed while the CRD was not served: %d -> %d messages", published, collectortest.Count(t, xSubj))
	}

	// 3. The CRD appears: the running collector starts reading
	// DNSEndpoints; Y is published, and X, which really is not there,
	// gets its tombstone.
	installCRD(t, other.Config)
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, other.Config), ns, collectortest.DNSEndpoint("y", collectortest.Entry("y.example.org", "AAAA", "2001:db8::1")))
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "y"), []events.Endpoint{collectortest.EP("y.example.org", "AAAA", "2001:db8::1")})
	collectortest.WaitState(t, xSubj, nil)
	if s, _ := collectortest.LastState(t, xSubj); !s.IsTombstone() {
		t.Fatal("X not tombstoned once the CRD was served")
	}
}

// A kind that is not served: the collector is ready and publishes nothing.
func TestCRDUnservedKind(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	cfg := collectortest.CRDConfig(ns)
	cfg.CRD.Kind = "NoSuchKind"
	collectortest.StartCollector(t, cfg)
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), ns, collectortest.DNSEndpoint("z", collectortest.Entry("z.example.org", "A", "192.0.2.1")))
	time.Sleep(5 * collectortest.CRDPoll)
	if _, ok := collectortest.LastState(t, collectortest.CRDSubject(ns, ns, "z")); ok {
		t.Fatal("published a DNSEndpoint for an unserved kind")
	}
}
