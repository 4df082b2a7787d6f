package collector_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/testenv/kube"
)

// ingressSvc is a Service to create for a case.
type ingressSvc struct {
	name        string
	selector    map[string]string // default istio=<name>
	externalIPs []string
	lb          []string
}

func (s ingressSvc) create(t *testing.T, ns string) {
	t.Helper()
	svc, ing := ingressService(s.name, nil, s.lb...)
	if s.selector != nil {
		svc.Spec.Selector = s.selector
	}
	svc.Spec.ExternalIPs = s.externalIPs
	createService(t, ns, svc, ing...)
}

var ingressGW = ingressSvc{name: "ingressgateway", lb: []string{"192.0.2.1"}}

type istioGatewayCase struct {
	name     string
	cfg      func(*collector.Config)
	services []ingressSvc
	gateway  *unstructured.Unstructured
	want     func(ns string) []events.Endpoint // nil: nothing
}

func runIstioGatewayRules(t *testing.T, cases []istioGatewayCase) {
	t.Helper()
	dc := installIstio(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			for _, s := range tc.services {
				s.create(t, ns)
			}
			createIstio(t, dc, istioGateways, ns, tc.gateway)
			startAndExpect(t, istioConfig(ns, "istio-gateway"), tc.cfg,
				istioSubject(ns, "istio-gateway", ns, tc.gateway.GetName()), tc.want, ns)
		})
	}
}

// istio-gateway: names from the servers' hosts.
func TestIstioGatewayRuleHosts(t *testing.T) {
	svcs := []ingressSvc{ingressGW}
	runIstioGatewayRules(t, []istioGatewayCase{
		{name: "server hosts, namespace prefix stripped, * skipped", services: svcs,
			gateway: istioGateway("g", nil, istioSel, []string{"a.example.org", "*"}, []string{"shop/b.example.org", "./c.example.org"}),
			want:    fixed(ep("a.example.org", "A", "192.0.2.1"), ep("b.example.org", "A", "192.0.2.1"), ep("c.example.org", "A", "192.0.2.1"))},
		{name: "wildcard host", services: svcs, gateway: istioGateway("g", nil, istioSel, []string{"*.apps.example.org"}),
			want: fixed(ep("*.apps.example.org", "A", "192.0.2.1"))},
		{name: "invalid host skipped", services: svcs, gateway: istioGateway("g", nil, istioSel, []string{"a/b/c.example.org", "bad..example.org", "ok.example.org"}),
			want: fixed(ep("ok.example.org", "A", "192.0.2.1"))},
		{name: "hostname annotation adds names", services: svcs,
			gateway: istioGateway("g", ann("hostname", "x.example.org"), istioSel, []string{"a.example.org"}),
			want:    fixed(ep("a.example.org", "A", "192.0.2.1"), ep("x.example.org", "A", "192.0.2.1"))},
		{name: "--ignore-hostname-annotation", services: svcs, cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			gateway: istioGateway("g", ann("hostname", "x.example.org"), istioSel, []string{"a.example.org"}),
			want:    fixed(ep("a.example.org", "A", "192.0.2.1"))},
		{name: "template when no host", services: svcs, cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.gw.example.org" },
			gateway: istioGateway("g", nil, istioSel, []string{"*"}),
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{ep("g."+ns+".gw.example.org", "A", "192.0.2.1")}
			}},
		{name: "--combine-fqdn-annotation", services: svcs,
			cfg: func(c *collector.Config) {
				c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.gw.example.org"
				c.CombineFQDNAnnotation = true
			},
			gateway: istioGateway("g", nil, istioSel, []string{"a.example.org"}),
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{ep("a.example.org", "A", "192.0.2.1"), ep("g."+ns+".gw.example.org", "A", "192.0.2.1")}
			}},
		{name: "no server host", services: svcs, gateway: istioGateway("g", nil, istioSel)},
	})
}

// istio-gateway: targets from the Services whose selector the Gateway's
// selector matches, or the target annotation.
func TestIstioGatewayRuleTargets(t *testing.T) {
	hosts := []string{"a.example.org"}
	runIstioGatewayRules(t, []istioGatewayCase{
		{name: "load balancer hostname is CNAME", services: []ingressSvc{{name: "ingressgateway", lb: []string{"lb.cloud.example.net"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: fixed(ep("a.example.org", "CNAME", "lb.cloud.example.net"))},
		{name: "ipv6 is AAAA", services: []ingressSvc{{name: "ingressgateway", lb: []string{"2001:db8::1", "192.0.2.1"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: fixed(ep("a.example.org", "A", "192.0.2.1"), ep("a.example.org", "AAAA", "2001:db8::1"))},
		{name: "externalIPs win over load balancer", services: []ingressSvc{{name: "ingressgateway", externalIPs: []string{"198.51.100.1"}, lb: []string{"192.0.2.1"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: fixed(ep("a.example.org", "A", "198.51.100.1"))},
		{name: "every selected Service", services: []ingressSvc{ingressGW,
			{name: "second", selector: map[string]string{"istio": "ingressgateway", "zone": "b"}, lb: []string{"192.0.2.2"}},
			{name: "other", lb: []string{"192.0.2.3"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: fixed(ep("a.example.org", "A", "192.0.2.1", "192.0.2.2"))},
		{name: "selector must be a subset of the Service's selector", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", nil, map[string]string{"istio": "ingressgateway", "zone": "b"}, hosts)},
		{name: "target annotation replaces Services", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", ann("target", "203.0.113.1,edge.example.net"), istioSel, hosts),
			want:    fixed(ep("a.example.org", "A", "203.0.113.1"), ep("a.example.org", "CNAME", "edge.example.net"))},
		{name: "invalid target entry skipped", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", ann("target", "300.1.1.1"), istioSel, hosts), want: fixed(ep("a.example.org", "A", "192.0.2.1"))},
		{name: "no Service", gateway: istioGateway("g", nil, istioSel, hosts)},
	})
}

// istio-gateway: controller, filters, ttl, set-identifier.
func TestIstioGatewayRuleAnnotations(t *testing.T) {
	svcs := []ingressSvc{ingressGW}
	hosts := []string{"a.example.org"}
	one := fixed(ep("a.example.org", "A", "192.0.2.1"))
	runIstioGatewayRules(t, []istioGatewayCase{
		{name: "controller other", services: svcs, gateway: istioGateway("g", ann("controller", "other"), istioSel, hosts)},
		{name: "annotation filter", services: svcs, cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			gateway: istioGateway("g", map[string]string{"team": "dns"}, istioSel, hosts), want: one},
		{name: "annotation filter excludes", services: svcs, cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			gateway: istioGateway("g", nil, istioSel, hosts)},
		{name: "ttl", services: svcs, gateway: istioGateway("g", ann("ttl", "10m"), istioSel, hosts),
			want: fixed(events.NewEndpoint("a.example.org", "A", 600, "192.0.2.1"))},
		{name: "set-identifier", services: svcs, gateway: istioGateway("g", ann("set-identifier", "eu"), istioSel, hosts),
			want: fixed(withSetID(ep("a.example.org", "A", "192.0.2.1"), "eu"))},
	})
}

type istioVSCase struct {
	name     string
	cfg      func(*collector.Config)
	gateways []*unstructured.Unstructured // in the case's namespace
	vs       *unstructured.Unstructured
	want     func(ns string) []events.Endpoint
}

func runIstioVSRules(t *testing.T, cases []istioVSCase) {
	t.Helper()
	dc := installIstio(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			ingressGW.create(t, ns)
			for _, g := range tc.gateways {
				createIstio(t, dc, istioGateways, ns, g)
			}
			createIstio(t, dc, istioVirtualServices, ns, tc.vs)
			startAndExpect(t, istioConfig(ns, "istio-virtualservice"), tc.cfg,
				istioSubject(ns, "istio-virtualservice", ns, tc.vs.GetName()), tc.want, ns)
		})
	}
}

// istio-virtualservice: the hosts of VirtualServices get the targets of
// the Gateways they are bound to, where those Gateways admit them.
func TestIstioVirtualServiceRules(t *testing.T) {
	allHosts := istioGateway("gw", nil, istioSel, []string{"*"})
	app := []string{"app.example.org"}
	one := fixed(ep("app.example.org", "A", "192.0.2.1"))
	runIstioVSRules(t, []istioVSCase{
		{name: "bound by name", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"gw"}), want: one},
		{name: "mesh only", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"mesh"})},
		{name: "mesh and gateway", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"mesh", "gw"}), want: one},
		{name: "unknown gateway", vs: istioVirtualService("vs", nil, app, []string{"nope"})},
		{name: "gateway host must admit the name",
			gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"other.example.org"})},
			vs:       istioVirtualService("vs", nil, []string{"app.example.org", "other.example.org"}, []string{"gw"}),
			want:     fixed(ep("other.example.org", "A", "192.0.2.1"))},
		{name: "wildcard gateway host", gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"*.example.org"})},
			vs: istioVirtualService("vs", nil, []string{"app.example.org", "app.example.com"}, []string{"gw"}), want: one},
		{name: "gateway host of this namespace with ./", gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"./app.example.org"})},
			vs: istioVirtualService("vs", nil, app, []string{"gw"}), want: one},
		{name: "gateway host for another namespace", gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"elsewhere/*"})},
			vs: istioVirtualService("vs", nil, app, []string{"gw"})},
		{name: "exportTo excluding the gateway's namespace", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", nil, app, []string{"gw"}, "elsewhere")},
		{name: "exportTo this namespace", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", nil, app, []string{"gw"}, "."), want: one},
		{name: "two gateways", gateways: []*unstructured.Unstructured{allHosts, istioGateway("gw2", ann("target", "198.51.100.2"), istioSel, []string{"*"})},
			vs:   istioVirtualService("vs", nil, app, []string{"gw", "gw2"}),
			want: fixed(ep("app.example.org", "A", "192.0.2.1", "198.51.100.2"))},
		{name: "gateway target annotation", gateways: []*unstructured.Unstructured{istioGateway("gw", ann("target", "lb.example.net"), istioSel, []string{"*"})},
			vs: istioVirtualService("vs", nil, app, []string{"gw"}), want: fixed(ep("app.example.org", "CNAME", "lb.example.net"))},
		{name: "virtualservice target annotation", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", ann("target", "203.0.113.9"), app, []string{"gw"}), want: fixed(ep("app.example.org", "A", "203.0.113.9"))},
		{name: "hostname annotation bound through the gateway", gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"*.example.org"})},
			vs:   istioVirtualService("vs", ann("hostname", "extra.example.org,extra.example.com"), app, []string{"gw"}),
			want: fixed(ep("app.example.org", "A", "192.0.2.1"), ep("extra.example.org", "A", "192.0.2.1"))},
		{name: "* host skipped", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, []string{"*"}, []string{"gw"})},
		{name: "ttl and set-identifier", gateways: []*unstructured.Unstructured{allHosts},
			vs:   istioVirtualService("vs", ann("ttl", "60", "set-identifier", "blue"), app, []string{"gw"}),
			want: fixed(withSetID(events.NewEndpoint("app.example.org", "A", 60, "192.0.2.1"), "blue"))},
		{name: "controller other", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", ann("controller", "other"), app, []string{"gw"})},
		{name: "template", gateways: []*unstructured.Unstructured{allHosts}, cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.vs.example.org" },
			vs: istioVirtualService("vs", nil, nil, []string{"gw"}), want: fixed(ep("vs.vs.example.org", "A", "192.0.2.1"))},
	})
}

// A Gateway in another namespace, named namespace/name.
func TestIstioVirtualServiceCrossNamespace(t *testing.T) {
	dc := installIstio(t)
	ns, gwNS := newNamespace(t), newNamespace(t)
	// Without --namespace, Services of every namespace count: a selector
	// of this test's own.
	sel := "xns-" + ns
	createIngressService(t, gwNS, sel, nil, "192.0.2.1")
	createIstio(t, dc, istioGateways, gwNS, istioGateway("gw", nil, map[string]string{"istio": sel}, []string{ns + "/*"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"app.example.org"}, []string{gwNS + "/gw"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("plain", nil, []string{"plain.example.org"}, []string{"gw"}))
	cfg := istioConfig(ns, "istio-virtualservice")
	cfg.Namespace = ""
	startCollector(t, cfg)
	waitState(t, istioSubject(ns, "istio-virtualservice", ns, "vs"), []events.Endpoint{ep("app.example.org", "A", "192.0.2.1")})
	if s, ok := lastState(t, istioSubject(ns, "istio-virtualservice", ns, "plain")); ok {
		t.Fatalf("VirtualService naming a Gateway of its own namespace that does not exist published %v", render(s.Endpoints))
	}
}

// Bad input on Istio objects is reported on them; their valid endpoints
// are published.
func TestIstioInvalidInputReported(t *testing.T) {
	dc := installIstio(t)
	ns := newNamespace(t)
	ingressGW.create(t, ns)
	before := testutil.ToFloat64(collector.InvalidInputMetricOf("istio-gateway", "InvalidAnnotation"))
	createIstio(t, dc, istioGateways, ns, istioGateway("bad", ann("ttl", "abc", "target", "10.0.0.256,192.0.2.7"), istioSel, []string{"x/y/z.example.org", "ok.example.org"}))
	broken := istioGateway("broken", nil, istioSel)
	broken.Object["spec"].(map[string]any)["servers"] = "not a list"
	createIstio(t, dc, istioGateways, ns, broken)
	startCollector(t, istioConfig(ns, "istio-gateway"))
	waitState(t, istioSubject(ns, "istio-gateway", ns, "bad"), []events.Endpoint{ep("ok.example.org", "A", "192.0.2.7")})
	expectEvents(t, ns, "Gateway", "bad", `ttl "abc"`, `target "10.0.0.256"`, `x/y/z.example.org`)
	if evs := waitObjectEvents(t, ns, "Gateway", "broken", 1); !strings.Contains(evs, "InvalidSpec") {
		t.Errorf("broken Gateway events:\n%s", evs)
	}
	if got := testutil.ToFloat64(collector.InvalidInputMetricOf("istio-gateway", "InvalidAnnotation")) - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}
}

// A change of an ingress Service republishes the Gateways selecting it and
// the VirtualServices bound to them, and nothing else; a change of a
// Gateway's hosts republishes the VirtualServices bound to it.
func TestIstioIncremental(t *testing.T) {
	dc := installIstio(t)
	ns := newNamespace(t)
	svc := createIngressService(t, ns, "ingressgateway", nil, "192.0.2.1")
	createIngressService(t, ns, "internal", nil, "10.9.0.1")
	createIstio(t, dc, istioGateways, ns, istioGateway("public", nil, istioSel, []string{"*.example.org"}))
	createIstio(t, dc, istioGateways, ns, istioGateway("private", nil, map[string]string{"istio": "internal"}, []string{"*.internal.example.org"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("app", nil, []string{"app.example.org"}, []string{"public"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("db", nil, []string{"db.internal.example.org"}, []string{"private"}))
	startCollector(t, istioConfig(ns, "istio-gateway", "istio-virtualservice"))
	subjects := map[string]string{
		"public":  istioSubject(ns, "istio-gateway", ns, "public"),
		"private": istioSubject(ns, "istio-gateway", ns, "private"),
		"app":     istioSubject(ns, "istio-virtualservice", ns, "app"),
		"db":      istioSubject(ns, "istio-virtualservice", ns, "db"),
	}
	waitState(t, subjects["public"], []events.Endpoint{ep("*.example.org", "A", "192.0.2.1")})
	waitState(t, subjects["private"], []events.Endpoint{ep("*.internal.example.org", "A", "10.9.0.1")})
	waitState(t, subjects["app"], []events.Endpoint{ep("app.example.org", "A", "192.0.2.1")})
	waitState(t, subjects["db"], []events.Endpoint{ep("db.internal.example.org", "A", "10.9.0.1")})
	before := map[string]uint64{}
	for k, s := range subjects {
		before[k] = count(t, s)
	}
	skipped := testutil.ToFloat64(collector.PublishSkippedMetricOf("istio-gateway")) +
		testutil.ToFloat64(collector.PublishSkippedMetricOf("istio-virtualservice"))

	setLoadBalancer(t, svc, corev1.LoadBalancerIngress{IP: "192.0.2.2"})
	waitState(t, subjects["public"], []events.Endpoint{ep("*.example.org", "A", "192.0.2.2")})
	waitState(t, subjects["app"], []events.Endpoint{ep("app.example.org", "A", "192.0.2.2")})

	// The Gateway stops admitting app.example.org: the VirtualService loses it.
	g, err := dc.Resource(istioGateways).Namespace(ns).Get(t.Context(), "public", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Object["spec"].(map[string]any)["servers"] = []any{map[string]any{"hosts": []any{"www.example.org"}}}
	if _, err := dc.Resource(istioGateways).Namespace(ns).Update(t.Context(), g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, subjects["public"], []events.Endpoint{ep("www.example.org", "A", "192.0.2.2")})
	waitState(t, subjects["app"], nil)

	// Barrier: a new Gateway, processed after everything before it.
	createIstio(t, dc, istioGateways, ns, istioGateway("zz-barrier", ann("target", "192.0.2.254"), nil, []string{"barrier.example.org"}))
	waitState(t, istioSubject(ns, "istio-gateway", ns, "zz-barrier"), []events.Endpoint{ep("barrier.example.org", "A", "192.0.2.254")})
	for k, want := range map[string]uint64{"public": before["public"] + 2, "app": before["app"] + 2, "private": before["private"], "db": before["db"]} {
		if got := count(t, subjects[k]); got != afterTombstone(t, subjects[k], want) {
			t.Errorf("%s: %d messages, want %d", k, got, want)
		}
	}
	after := testutil.ToFloat64(collector.PublishSkippedMetricOf("istio-gateway")) +
		testutil.ToFloat64(collector.PublishSkippedMetricOf("istio-virtualservice"))
	if after != skipped {
		t.Errorf("%v objects recomputed without change; want none", after-skipped)
	}
}

// Istio's CRDs installed while the collector runs: the sources start
// without a restart.
func TestIstioCRDsAppear(t *testing.T) {
	other := kube.StartT(t)
	ns := "istio-late"
	if _, err := other.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := istioConfig(newNamespace(t), "istio-gateway", "istio-virtualservice")
	clusterName := cfg.ClusterName
	cfg.Namespace = ns
	cfg.RESTConfig = other.Config
	cfg.Workers = 1
	c, err := collector.New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	runCollector(t, c)

	if err := other.InstallCRDs(istioCRDDir); err != nil {
		t.Fatal(err)
	}
	dc := dynFor(t, other.Config)
	s, ing := ingressService("ingressgateway", nil, "192.0.2.1")
	s.Namespace = ns
	s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	created, err := other.Client.CoreV1().Services(ns).Create(t.Context(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.LoadBalancer.Ingress = ing
	if _, err := other.Client.CoreV1().Services(ns).UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createIstio(t, dc, istioGateways, ns, istioGateway("gw", nil, istioSel, []string{"*.example.org"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"app.example.org"}, []string{"gw"}))
	waitState(t, istioSubject(clusterName, "istio-gateway", ns, "gw"), []events.Endpoint{ep("*.example.org", "A", "192.0.2.1")})
	waitState(t, istioSubject(clusterName, "istio-virtualservice", ns, "vs"), []events.Endpoint{ep("app.example.org", "A", "192.0.2.1")})
}

// The ingress annotation on a Gateway: targets from the named Ingress's
// load balancer status, not the Services; a change of that status
// republishes the Gateway and the VirtualServices bound to it.
func TestIstioGatewayIngressAnnotation(t *testing.T) {
	dc := installIstio(t)
	ns := newNamespace(t)
	ingressGW.create(t, ns)
	edge := createIngress(t, ns, ing("edge", nil, []string{"edge.example.org"}), ingLB("203.0.113.5", "lb.edge.example.net"))
	createIstio(t, dc, istioGateways, ns, istioGateway("by-name", ann("ingress", "edge"), istioSel, []string{"a.example.org"}))
	createIstio(t, dc, istioGateways, ns, istioGateway("by-ref", ann("ingress", ns+"/edge"), istioSel, []string{"b.example.org"}))
	createIstio(t, dc, istioGateways, ns, istioGateway("missing", ann("ingress", "nope"), istioSel, []string{"c.example.org"}))
	createIstio(t, dc, istioGateways, ns, istioGateway("malformed", ann("ingress", "a/b/c", "target", ""), istioSel, []string{"d.example.org"}))
	createIstio(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"a.example.org"}, []string{"by-name"}))
	startCollector(t, istioConfig(ns, "istio-gateway", "istio-virtualservice"))
	gwSubj := func(n string) string { return istioSubject(ns, "istio-gateway", ns, n) }
	vsSubj := istioSubject(ns, "istio-virtualservice", ns, "vs")
	waitState(t, gwSubj("by-name"), []events.Endpoint{ep("a.example.org", "A", "203.0.113.5"), ep("a.example.org", "CNAME", "lb.edge.example.net")})
	waitState(t, gwSubj("by-ref"), []events.Endpoint{ep("b.example.org", "A", "203.0.113.5"), ep("b.example.org", "CNAME", "lb.edge.example.net")})
	waitState(t, vsSubj, []events.Endpoint{ep("a.example.org", "A", "203.0.113.5"), ep("a.example.org", "CNAME", "lb.edge.example.net")})
	expectEvents(t, ns, "Gateway", "malformed", `ingress "a/b/c"`)
	for _, n := range []string{"missing", "malformed"} {
		if s, ok := lastState(t, gwSubj(n)); ok {
			t.Errorf("%s published %v, want nothing", n, render(s.Endpoints))
		}
	}

	edge.Status.LoadBalancer.Ingress = ingLB("203.0.113.6")
	if _, err := cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), edge, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, gwSubj("by-name"), []events.Endpoint{ep("a.example.org", "A", "203.0.113.6")})
	waitState(t, gwSubj("by-ref"), []events.Endpoint{ep("b.example.org", "A", "203.0.113.6")})
	waitState(t, vsSubj, []events.Endpoint{ep("a.example.org", "A", "203.0.113.6")})
}
