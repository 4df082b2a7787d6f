package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/testenv/kube"
)

// Bad input on a route and on its Gateway: a Warning event on the object
// carrying it, the invalid-input metric, and the valid endpoints still
// published.
func TestGatewayBadInput(t *testing.T) {
	collectortest.InstallGatewayAPI(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	src := "gateway-httproute"
	createGateway(t, dc, ns, newGW("g", []string{gwIP}, gwWeb).withAnn(map[string]string{collectortest.Alpha + "target": "203.0.113.1,300.1.1.1"}))
	cfg := gatewayConfig(ns, src)
	cfg.FQDNTemplate = "{{.Name}}.{{.NoSuchField}}.tmpl.org"
	cfg.CombineFQDNAnnotation = true
	collectortest.StartCollector(t, cfg)
	annBefore := collectortest.InvalidInput(t, src, "InvalidAnnotation")
	tmplBefore := collectortest.InvalidInput(t, src, "FQDNTemplateFailed")

	createRoute(t, dc, src, ns, "", gwRoute(gwHosts(gwHost), map[string]string{
		collectortest.Alpha + "ttl": "abc", collectortest.Alpha + "hostname": "ok.example.org,bad..example.org",
	}, attach("g")))
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "r"),
		[]events.Endpoint{collectortest.EP(gwHost, "A", "203.0.113.1"), collectortest.EP("ok.example.org", "A", "203.0.113.1")})

	msgs := collectortest.WaitObjectEvents(t, ns, "HTTPRoute", "r", 3)
	for _, want := range []string{"ttl", "bad..example.org", "fqdn-template"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event about %s on the route in:\n%s", want, msgs)
		}
	}
	if msgs := collectortest.WaitObjectEvents(t, ns, "Gateway", "g", 1); !strings.Contains(msgs, "300.1.1.1") {
		t.Errorf("no event about the invalid target on the Gateway in:\n%s", msgs)
	}
	if got := collectortest.InvalidInput(t, src, "InvalidAnnotation"); got < annBefore+3 {
		t.Errorf("invalid_input_total{%s,InvalidAnnotation} went %v -> %v, want +3 (ttl, hostname, target)", src, annBefore, got)
	}
	if got := collectortest.InvalidInput(t, src, "FQDNTemplateFailed"); got < tmplBefore+1 {
		t.Errorf("invalid_input_total{%s,FQDNTemplateFailed} went %v -> %v, want +1", src, tmplBefore, got)
	}
}

// A collector started before the Gateway API CRDs exist is ready, and
// reads Gateways and routes once they are installed, without a restart.
// Discovery is polled slowly, so the Gateway and the route exist before
// it finds the CRDs: they arrive in the informers' initial lists, while
// the collector already runs, and must still be computed once the
// informers have synced.
func TestGatewayCRDsAppear(t *testing.T) {
	other := kube.StartT(t)
	ns, src := "gw-appear", "gateway-httproute"
	clusterName := runOnOwnCluster(t, other, ns, src, 5*time.Second)
	crds := collectortest.GatewayCRDDir(t)
	if err := other.InstallCRDs(filepath.Join(crds, "gateway.networking.k8s.io_gateways.yaml"),
		filepath.Join(crds, "gateway.networking.k8s.io_httproutes.yaml")); err != nil {
		t.Fatal(err)
	}
	dc := collectortest.DynamicClient(t, other.Config)
	createGateway(t, dc, ns, newGW("g", []string{gwIP}, gwWeb))
	createRoute(t, dc, src, ns, "", gwRoute(gwHosts(gwHost), nil, attach("g")))
	collectortest.WaitState(t, events.SourceSubject(clusterName, src, ns, "r"), []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)})
}

// A route's deletion is a tombstone; so is the loss of its only Gateway.
func TestGatewayRouteLifecycle(t *testing.T) {
	collectortest.InstallGatewayAPI(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	src := "gateway-httproute"
	createGateway(t, dc, ns, newGW("g", []string{gwIP}, gwWeb))
	collectortest.StartCollector(t, gatewayConfig(ns, src))
	createRoute(t, dc, src, ns, "", gwRoute(gwHosts(gwHost), nil, attach("g")))
	r2 := gwRoute(gwHosts("two.example.org"), nil, attach("g"))
	r2.name = "r2"
	createRoute(t, dc, src, ns, "", r2)
	subj, subj2 := events.SourceSubject(ns, src, ns, "r"), events.SourceSubject(ns, src, ns, "r2")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(gwHost, "A", gwIP)})
	collectortest.WaitState(t, subj2, []events.Endpoint{collectortest.EP("two.example.org", "A", gwIP)})

	if err := dc.Resource(gwGVR("httproutes")).Namespace(ns).Delete(t.Context(), "r", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
	if s, _ := collectortest.LastState(t, subj); !s.IsTombstone() {
		t.Fatal("no tombstone for the deleted route")
	}
	if err := dc.Resource(gwGVR("gateways")).Namespace(ns).Delete(t.Context(), "g", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj2, nil)
	if s, _ := collectortest.LastState(t, subj2); !s.IsTombstone() {
		t.Fatal("no tombstone for the route whose Gateway is gone")
	}
}

// routeSubjects gives the subjects of the routes of source src in ns.
func routeSubjects(ns, src string) func(name string) string {
	return func(name string) string { return events.SourceSubject(ns, src, ns, name) }
}

// A Gateway's new address republishes exactly its routes; a Namespace's
// new labels exactly the routes a listener's namespace selector now
// admits or refuses; a Gateway status change routes do not read,
// nothing.
func TestGatewayIncremental(t *testing.T) {
	collectortest.InstallGatewayAPI(t)
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	src := "gateway-httproute"
	labelNamespace(t, ns, map[string]string{"team": "a"})
	createGateway(t, dc, ns, newGW("g", []string{gwIP}, gwWeb))
	createGateway(t, dc, ns, newGW("h", []string{gwIP2}, gwWeb))
	createGateway(t, dc, ns, newGW("s", []string{"192.0.2.30"}, gwLis("web", "HTTP", 80, allowSelector("team", "a"))))
	collectortest.StartCollector(t, gatewayConfig(ns, src))
	mk := func(name, host, gateway string) {
		r := gwRoute(gwHosts(host), nil, attach(gateway))
		r.name = name
		createRoute(t, dc, src, ns, "", r)
	}
	mk("g1", "g1.example.org", "g")
	mk("g2", "g2.example.org", "g")
	mk("h1", "h1.example.org", "h")
	mk("s1", "s1.example.org", "s")
	names := []string{"g1", "g2", "h1", "s1"}
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "g1"), []events.Endpoint{collectortest.EP("g1.example.org", "A", gwIP)})
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "g2"), []events.Endpoint{collectortest.EP("g2.example.org", "A", gwIP)})
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "h1"), []events.Endpoint{collectortest.EP("h1.example.org", "A", gwIP2)})
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "s1"), []events.Endpoint{collectortest.EP("s1.example.org", "A", "192.0.2.30")})

	// Gateway g moves: g1 and g2 are republished, h1 and s1 are not.
	before := collectortest.Counts(t, routeSubjects(ns, src), names...)
	skippedBefore := collectortest.PublishSkipped(t, src)
	g, err := dc.Resource(gwGVR("gateways")).Namespace(ns).Get(t.Context(), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setGatewayAddresses(t, dc, g, "192.0.2.99")
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "g1"), []events.Endpoint{collectortest.EP("g1.example.org", "A", "192.0.2.99")})
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "g2"), []events.Endpoint{collectortest.EP("g2.example.org", "A", "192.0.2.99")})
	barrier := func() {
		t.Helper()
		createGateway(t, dc, ns, newGW("zz-barrier", []string{"192.0.2.254"}, gwWeb))
		gatewayBarrier(t, dc, src, ns, ns, barrierName)
	}
	barrier()
	collectortest.ExpectCounts(t, routeSubjects(ns, src), before, "g1", "g2")
	// Not even recomputed: nothing was skipped by hash either.
	if got := collectortest.PublishSkipped(t, src); got != skippedBefore {
		t.Errorf("publish_skipped_total{%s} went %v -> %v: routes of other Gateways were recomputed", src, skippedBefore, got)
	}

	// A condition on Gateway h changes: routes do not read it; nothing
	// is recomputed.
	skippedBefore = collectortest.PublishSkipped(t, src)
	h, err := dc.Resource(gwGVR("gateways")).Namespace(ns).Get(t.Context(), "h", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conds := []any{gmap{"type": "Programmed", "status": "True", "reason": "Programmed", "message": "test",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
	if err := unstructured.SetNestedSlice(h.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(gwGVR("gateways")).Namespace(ns).UpdateStatus(t.Context(), h, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before = collectortest.Counts(t, routeSubjects(ns, src), names...)
	mk("zz-barrier-2", "b2.example.org", "zz-barrier")
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "zz-barrier-2"), []events.Endpoint{collectortest.EP("b2.example.org", "A", "192.0.2.254")})
	collectortest.ExpectCounts(t, routeSubjects(ns, src), before)
	if got := collectortest.PublishSkipped(t, src); got != skippedBefore {
		t.Errorf("publish_skipped_total{%s} went %v -> %v: a Gateway condition change recomputed routes", src, skippedBefore, got)
	}

	// The namespace's labels change: s1 (behind a selector) loses its
	// records; g1, g2, h1 are not recomputed.
	before = collectortest.Counts(t, routeSubjects(ns, src), names...)
	skippedBefore = collectortest.PublishSkipped(t, src)
	labelNamespace(t, ns, map[string]string{"team": "b"})
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "s1"), nil)
	mk("zz-barrier-3", "b3.example.org", "zz-barrier")
	collectortest.WaitState(t, events.SourceSubject(ns, src, ns, "zz-barrier-3"), []events.Endpoint{collectortest.EP("b3.example.org", "A", "192.0.2.254")})
	collectortest.ExpectCounts(t, routeSubjects(ns, src), before, "s1")
	if got := collectortest.PublishSkipped(t, src); got != skippedBefore {
		t.Errorf("publish_skipped_total{%s} went %v -> %v: a Namespace change recomputed routes outside selectors", src, skippedBefore, got)
	}
}

// A cluster whose Gateway API is older serves Gateways only as v1beta1
// and TCPRoutes only as v1alpha2: the source reads them there.
func TestGatewayOlderVersions(t *testing.T) {
	dir := t.TempDir()
	onlyVersion(t, "gateway.networking.k8s.io_gateways.yaml", "v1beta1", dir)
	onlyVersion(t, "gateway.networking.k8s.io_tcproutes.yaml", "v1alpha2", dir)
	other := kube.StartT(t)
	if err := other.InstallCRDs(dir); err != nil {
		t.Fatal(err)
	}
	ns, src := "gw-old", "gateway-tcproute"
	clusterName := runOnOwnCluster(t, other, ns, src, gwPoll)
	dc := collectortest.DynamicClient(t, other.Config)
	g := newGW("g", []string{gwIP}, gwLis("tcp", "TCP", 9000))
	g.version = "v1beta1"
	createGateway(t, dc, ns, g)
	createRouteAt(t, dc, "v1alpha2", src, ns, "", gwRoute(nil, map[string]string{collectortest.Alpha + "hostname": "tcp.example.org"}, attach("g")))
	collectortest.WaitState(t, events.SourceSubject(clusterName, src, ns, "r"), []events.Endpoint{collectortest.EP("tcp.example.org", "A", gwIP)})
}

// onlyVersion writes the CRD of the gateway-api module's file into dir,
// serving (and storing) only version.
func onlyVersion(t *testing.T, file, version, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(collectortest.GatewayCRDDir(t), file))
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	found := false
	for _, v := range versions {
		v := v.(map[string]any)
		keep := v["name"] == version
		found = found || keep
		v["served"], v["storage"] = keep, keep
	}
	if !found {
		t.Fatalf("no %s in %s", version, file)
	}
	if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runOnOwnCluster creates namespace ns on an API server of the test's own
// and runs a collector of src for it there, under a cluster name unique on
// the shared stream, which it returns.
func runOnOwnCluster(t *testing.T, other *kube.Cluster, ns, src string, poll time.Duration) string {
	t.Helper()
	if _, err := other.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := gatewayConfig(ns, src)
	cfg.ClusterName = collectortest.NewNamespace(t)
	cfg.RESTConfig = other.Config
	cfg.Workers = 1
	cfg.Gateway.PollInterval = poll
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollector(t, c)
	return cfg.ClusterName
}
