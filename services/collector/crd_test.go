package collector_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

type crdCase struct {
	name        string
	cfg         func(*collector.Config)
	labels      map[string]string
	annotations map[string]string
	entries     []map[string]any
	// want: nil means nothing is published.
	want []events.Endpoint
	// barrier adapts the barrier DNSEndpoint to the case's filters.
	barrier func(*unstructured.Unstructured)
}

func runCRDRules(t *testing.T, cases []crdCase) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collectortest.CRDConfig(ns)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			u := collectortest.DNSEndpoint("rec", tc.entries...)
			u.SetLabels(tc.labels)
			u.SetAnnotations(tc.annotations)
			collectortest.CreateDNSEndpoint(t, dc, ns, u)
			subj := collectortest.CRDSubject(ns, ns, "rec")
			if tc.want == nil {
				b := collectortest.DNSEndpoint("zz-barrier", collectortest.Entry("barrier."+ns+".test", "A", "192.0.2.254"))
				if tc.barrier != nil {
					tc.barrier(b)
				}
				collectortest.CreateDNSEndpoint(t, dc, ns, b)
				collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "zz-barrier"), []events.Endpoint{collectortest.EP("barrier."+ns+".test", "A", "192.0.2.254")})
				if s, ok := collectortest.LastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", collectortest.Render(s.Endpoints))
				}
				return
			}
			s := collectortest.WaitState(t, subj, tc.want)
			wantRef := events.ObjectRef{Cluster: ns, Source: "crd", Namespace: ns, Name: "rec"}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
		})
	}
}

// Which entries of spec.endpoints are published, and how.
func TestCRDRuleEntries(t *testing.T) {
	runCRDRules(t, []crdCase{
		{name: "A, AAAA, CNAME", entries: []map[string]any{
			collectortest.Entry("a.example.org", "A", "192.0.2.1", "192.0.2.2"), collectortest.Entry("a.example.org", "AAAA", "2001:db8::1"),
			collectortest.Entry("c.example.org", "CNAME", "a.example.org")},
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1", "192.0.2.2"), collectortest.EP("a.example.org", "AAAA", "2001:db8::1"),
				collectortest.EP("c.example.org", "CNAME", "a.example.org")}},
		{name: "names and targets normalized", entries: []map[string]any{collectortest.Entry("WWW.Example.org.", "CNAME", "Backend.Example.NET.")},
			want: []events.Endpoint{collectortest.EP("www.example.org", "CNAME", "backend.example.net")}},
		{name: "wildcard name", entries: []map[string]any{collectortest.Entry("*.apps.example.org", "A", "192.0.2.1")},
			want: []events.Endpoint{collectortest.EP("*.apps.example.org", "A", "192.0.2.1")}},
		{name: "TXT, MX, SRV, NS", entries: []map[string]any{
			collectortest.Entry("t.example.org", "TXT", "hello world"), collectortest.Entry("example.org", "MX", "10 mail.example.org"),
			collectortest.Entry("_sip._tcp.example.org", "SRV", "10 5 5060 sip.example.org."), collectortest.Entry("sub.example.org", "NS", "ns1.example.net")},
			want: []events.Endpoint{collectortest.EP("t.example.org", "TXT", "hello world"), collectortest.EP("example.org", "MX", "10 mail.example.org"),
				collectortest.EP("_sip._tcp.example.org", "SRV", "10 5 5060 sip.example.org"), collectortest.EP("sub.example.org", "NS", "ns1.example.net")}},
		{name: "recordTTL", entries: []map[string]any{func() map[string]any {
			e := collectortest.Entry("a.example.org", "A", "192.0.2.1")
			e["recordTTL"] = int64(60)
			return e
		}()}, want: []events.Endpoint{events.NewEndpoint("a.example.org", "A", 60, "192.0.2.1")}},
		{name: "invalid entries skipped, valid kept", entries: []map[string]any{
			collectortest.Entry("ok.example.org", "A", "192.0.2.1"),
			collectortest.Entry("a.example.org", "A", "host.example.org"), collectortest.Entry("b.example.org", "AAAA", "192.0.2.1"),
			collectortest.Entry("c.example.org", "CNAME", "192.0.2.1"), collectortest.Entry("d.example.org", "A"), collectortest.Entry("e.example.org", "MX", "mail.example.org"),
			collectortest.Entry("f.example.org", "A", "192.0.2.1", "300.1.1.1")},
			want: []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")}},
		{name: "only invalid entries: nothing", entries: []map[string]any{collectortest.Entry("a.example.org", "A", "host.example.org")}},
		{name: "no entries: nothing", entries: nil},
	})
}

// --label-filter and --annotation-filter apply to DNSEndpoints.
func TestCRDRuleFilters(t *testing.T) {
	e := []map[string]any{collectortest.Entry("a.example.org", "A", "192.0.2.1")}
	want := []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")}
	runCRDRules(t, []crdCase{
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			labels: map[string]string{"dns": "yes"}, entries: e, want: want},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			labels: map[string]string{"dns": "no"}, entries: e,
			barrier: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"dns": "yes"}) }},
		{name: "annotation filter matches", cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			annotations: map[string]string{"team": "dns"}, entries: e, want: want},
		{name: "annotation filter does not match", cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			annotations: map[string]string{"team": "web"}, entries: e,
			barrier: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"team": "dns"}) }},
	})
}

// Every field of an entry reaches the bus.
func TestCRDFieldsMapped(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	e := collectortest.Entry("Full.Example.org.", "CNAME", "lb.example.net")
	e["setIdentifier"] = "eu-west"
	e["recordTTL"] = int64(120)
	e["labels"] = map[string]any{"owner": "team-a", "env": "prod"}
	e["providerSpecific"] = []any{
		map[string]any{"name": "aws/weight", "value": "10"},
		map[string]any{"name": "alias", "value": "true"},
	}
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), ns, collectortest.DNSEndpoint("full", e))
	want := events.Endpoint{
		DNSName: "full.example.org", RecordType: "CNAME", Targets: []string{"lb.example.net"},
		SetIdentifier: "eu-west", RecordTTL: 120, Labels: map[string]string{"owner": "team-a", "env": "prod"},
		ProviderSpecific: []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}, {Name: "aws/weight", Value: "10"}},
	}
	s := collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "full"), []events.Endpoint{want})
	if len(s.Endpoints) != 1 || !reflect.DeepEqual(s.Endpoints[0], want) {
		t.Fatalf("published %+v\nwant %+v", s.Endpoints, want)
	}
}

// Invalid entries: a Warning Event on the DNSEndpoint, the metric, and
// the valid entries published.
func TestCRDInvalidEntriesReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collectortest.CRDConfig(ns))
	before := collectortest.InvalidInput(t, "crd", "InvalidEndpoint")
	collectortest.CreateDNSEndpoint(t, collectortest.DynamicClient(t, collectortest.Cluster.Config), ns, collectortest.DNSEndpoint("bad",
		collectortest.Entry("ok.example.org", "A", "192.0.2.1"),
		collectortest.Entry("a.example.org", "A", "host.example.org"),
		collectortest.Entry("b.example.org", "AAAA", "192.0.2.1")))
	collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "bad"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")})
	msgs := collectortest.WaitObjectEvents(t, ns, "DNSEndpoint", "bad", 2)
	for _, want := range []string{"InvalidEndpoint", "spec.endpoints[1]", "spec.endpoints[2]"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event with %q in:\n%s", want, msgs)
		}
	}
	if got := collectortest.InvalidInput(t, "crd", "InvalidEndpoint"); got < before+2 {
		t.Errorf("invalid_input_total{crd,InvalidEndpoint} went %v -> %v, want +2", before, got)
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
