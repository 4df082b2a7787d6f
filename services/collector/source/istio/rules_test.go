package istio_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
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
	collectortest.CreateService(t, ns, svc, ing...)
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
			ns := collectortest.NewNamespace(t)
			for _, s := range tc.services {
				s.create(t, ns)
			}
			collectortest.CreateObject(t, dc, istioGateways, ns, tc.gateway)
			collectortest.StartAndExpect(t, istioConfig(ns, "istio-gateway"), tc.cfg,
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
			want:    collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("b.example.org", "A", "192.0.2.1"), collectortest.EP("c.example.org", "A", "192.0.2.1"))},
		{name: "wildcard host", services: svcs, gateway: istioGateway("g", nil, istioSel, []string{"*.apps.example.org"}),
			want: collectortest.Fixed(collectortest.EP("*.apps.example.org", "A", "192.0.2.1"))},
		{name: "invalid host skipped", services: svcs, gateway: istioGateway("g", nil, istioSel, []string{"a/b/c.example.org", "bad..example.org", "ok.example.org"}),
			want: collectortest.Fixed(collectortest.EP("ok.example.org", "A", "192.0.2.1"))},
		{name: "hostname annotation adds names", services: svcs,
			gateway: istioGateway("g", collectortest.Ann("hostname", "x.example.org"), istioSel, []string{"a.example.org"}),
			want:    collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("x.example.org", "A", "192.0.2.1"))},
		{name: "--ignore-hostname-annotation", services: svcs, cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			gateway: istioGateway("g", collectortest.Ann("hostname", "x.example.org"), istioSel, []string{"a.example.org"}),
			want:    collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"))},
		{name: "template when no host", services: svcs, cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.gw.example.org" },
			gateway: istioGateway("g", nil, istioSel, []string{"*"}),
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("g."+ns+".gw.example.org", "A", "192.0.2.1")}
			}},
		{name: "--combine-fqdn-annotation", services: svcs,
			cfg: func(c *collector.Config) {
				c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.gw.example.org"
				c.CombineFQDNAnnotation = true
			},
			gateway: istioGateway("g", nil, istioSel, []string{"a.example.org"}),
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("g."+ns+".gw.example.org", "A", "192.0.2.1")}
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
			gateway: istioGateway("g", nil, istioSel, hosts), want: collectortest.Fixed(collectortest.EP("a.example.org", "CNAME", "lb.cloud.example.net"))},
		{name: "ipv6 is AAAA", services: []ingressSvc{{name: "ingressgateway", lb: []string{"2001:db8::1", "192.0.2.1"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("a.example.org", "AAAA", "2001:db8::1"))},
		{name: "externalIPs win over load balancer", services: []ingressSvc{{name: "ingressgateway", externalIPs: []string{"198.51.100.1"}, lb: []string{"192.0.2.1"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: collectortest.Fixed(collectortest.EP("a.example.org", "A", "198.51.100.1"))},
		{name: "every selected Service", services: []ingressSvc{ingressGW,
			{name: "second", selector: map[string]string{"istio": "ingressgateway", "zone": "b"}, lb: []string{"192.0.2.2"}},
			{name: "other", lb: []string{"192.0.2.3"}}},
			gateway: istioGateway("g", nil, istioSel, hosts), want: collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1", "192.0.2.2"))},
		{name: "selector must be a subset of the Service's selector", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", nil, map[string]string{"istio": "ingressgateway", "zone": "b"}, hosts)},
		{name: "target annotation replaces Services", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", collectortest.Ann("target", "203.0.113.1,edge.example.net"), istioSel, hosts),
			want:    collectortest.Fixed(collectortest.EP("a.example.org", "A", "203.0.113.1"), collectortest.EP("a.example.org", "CNAME", "edge.example.net"))},
		{name: "invalid target entry skipped", services: []ingressSvc{ingressGW},
			gateway: istioGateway("g", collectortest.Ann("target", "300.1.1.1"), istioSel, hosts), want: collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"))},
		{name: "no Service", gateway: istioGateway("g", nil, istioSel, hosts)},
	})
}

// istio-gateway: controller, filters, ttl, set-identifier.
func TestIstioGatewayRuleAnnotations(t *testing.T) {
	svcs := []ingressSvc{ingressGW}
	hosts := []string{"a.example.org"}
	one := collectortest.Fixed(collectortest.EP("a.example.org", "A", "192.0.2.1"))
	runIstioGatewayRules(t, []istioGatewayCase{
		{name: "controller other", services: svcs, gateway: istioGateway("g", collectortest.Ann("controller", "other"), istioSel, hosts)},
		{name: "annotation filter", services: svcs, cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			gateway: istioGateway("g", map[string]string{"team": "dns"}, istioSel, hosts), want: one},
		{name: "annotation filter excludes", services: svcs, cfg: func(c *collector.Config) { c.AnnotationFilter = "team=dns" },
			gateway: istioGateway("g", nil, istioSel, hosts)},
		{name: "ttl", services: svcs, gateway: istioGateway("g", collectortest.Ann("ttl", "10m"), istioSel, hosts),
			want: collectortest.Fixed(events.NewEndpoint("a.example.org", "A", 600, "192.0.2.1"))},
		{name: "set-identifier", services: svcs, gateway: istioGateway("g", collectortest.Ann("set-identifier", "eu"), istioSel, hosts),
			want: collectortest.Fixed(collectortest.WithSetID(collectortest.EP("a.example.org", "A", "192.0.2.1"), "eu"))},
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
			ns := collectortest.NewNamespace(t)
			ingressGW.create(t, ns)
			for _, g := range tc.gateways {
				collectortest.CreateObject(t, dc, istioGateways, ns, g)
			}
			collectortest.CreateObject(t, dc, istioVirtualServices, ns, tc.vs)
			collectortest.StartAndExpect(t, istioConfig(ns, "istio-virtualservice"), tc.cfg,
				istioSubject(ns, "istio-virtualservice", ns, tc.vs.GetName()), tc.want, ns)
		})
	}
}

// istio-virtualservice: the hosts of VirtualServices get the targets of
// the Gateways they are bound to, where those Gateways admit them.
func TestIstioVirtualServiceRules(t *testing.T) {
	allHosts := istioGateway("gw", nil, istioSel, []string{"*"})
	app := []string{"app.example.org"}
	one := collectortest.Fixed(collectortest.EP("app.example.org", "A", "192.0.2.1"))
	runIstioVSRules(t, []istioVSCase{
		{name: "bound by name", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"gw"}), want: one},
		{name: "mesh only", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"mesh"})},
		{name: "mesh and gateway", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, app, []string{"mesh", "gw"}), want: one},
		{name: "unknown gateway", vs: istioVirtualService("vs", nil, app, []string{"nope"})},
		{name: "gateway host must admit the name",
			gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"other.example.org"})},
			vs:       istioVirtualService("vs", nil, []string{"app.example.org", "other.example.org"}, []string{"gw"}),
			want:     collectortest.Fixed(collectortest.EP("other.example.org", "A", "192.0.2.1"))},
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
		{name: "two gateways", gateways: []*unstructured.Unstructured{allHosts, istioGateway("gw2", collectortest.Ann("target", "198.51.100.2"), istioSel, []string{"*"})},
			vs:   istioVirtualService("vs", nil, app, []string{"gw", "gw2"}),
			want: collectortest.Fixed(collectortest.EP("app.example.org", "A", "192.0.2.1", "198.51.100.2"))},
		{name: "gateway target annotation", gateways: []*unstructured.Unstructured{istioGateway("gw", collectortest.Ann("target", "lb.example.net"), istioSel, []string{"*"})},
			vs: istioVirtualService("vs", nil, app, []string{"gw"}), want: collectortest.Fixed(collectortest.EP("app.example.org", "CNAME", "lb.example.net"))},
		{name: "virtualservice target annotation", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", collectortest.Ann("target", "203.0.113.9"), app, []string{"gw"}), want: collectortest.Fixed(collectortest.EP("app.example.org", "A", "203.0.113.9"))},
		{name: "hostname annotation bound through the gateway", gateways: []*unstructured.Unstructured{istioGateway("gw", nil, istioSel, []string{"*.example.org"})},
			vs:   istioVirtualService("vs", collectortest.Ann("hostname", "extra.example.org,extra.example.com"), app, []string{"gw"}),
			want: collectortest.Fixed(collectortest.EP("app.example.org", "A", "192.0.2.1"), collectortest.EP("extra.example.org", "A", "192.0.2.1"))},
		{name: "* host skipped", gateways: []*unstructured.Unstructured{allHosts}, vs: istioVirtualService("vs", nil, []string{"*"}, []string{"gw"})},
		{name: "ttl and set-identifier", gateways: []*unstructured.Unstructured{allHosts},
			vs:   istioVirtualService("vs", collectortest.Ann("ttl", "60", "set-identifier", "blue"), app, []string{"gw"}),
			want: collectortest.Fixed(collectortest.WithSetID(events.NewEndpoint("app.example.org", "A", 60, "192.0.2.1"), "blue"))},
		{name: "controller other", gateways: []*unstructured.Unstructured{allHosts},
			vs: istioVirtualService("vs", collectortest.Ann("controller", "other"), app, []string{"gw"})},
		{name: "template", gateways: []*unstructured.Unstructured{allHosts}, cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.vs.example.org" },
			vs: istioVirtualService("vs", nil, nil, []string{"gw"}), want: collectortest.Fixed(collectortest.EP("vs.vs.example.org", "A", "192.0.2.1"))},
	})
}

// A Gateway in another namespace, named namespace/name.
func TestIstioVirtualServiceCrossNamespace(t *testing.T) {
	dc := installIstio(t)
	ns, gwNS := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	// Without --namespace, Services of every namespace count: a selector
	// of this test's own.
	sel := "xns-" + ns
	createIngressService(t, gwNS, sel, nil, "192.0.2.1")
	collectortest.CreateObject(t, dc, istioGateways, gwNS, istioGateway("gw", nil, map[string]string{"istio": sel}, []string{ns + "/*"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"app.example.org"}, []string{gwNS + "/gw"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("plain", nil, []string{"plain.example.org"}, []string{"gw"}))
	cfg := istioConfig(ns, "istio-virtualservice")
	cfg.Namespace = ""
	collectortest.StartCollector(t, cfg)
	collectortest.WaitState(t, istioSubject(ns, "istio-virtualservice", ns, "vs"), []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1")})
	if s, ok := collectortest.LastState(t, istioSubject(ns, "istio-virtualservice", ns, "plain")); ok {
		t.Fatalf("VirtualService naming a Gateway of its own namespace that does not exist published %v", collectortest.Render(s.Endpoints))
	}
}

// Bad input on Istio objects is reported on them; their valid endpoints
// are published.
func TestIstioInvalidInputReported(t *testing.T) {
	dc := installIstio(t)
	ns := collectortest.NewNamespace(t)
	ingressGW.create(t, ns)
	before := collectortest.InvalidInput(t, "istio-gateway", "InvalidAnnotation")
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("bad", collectortest.Ann("ttl", "abc", "target", "10.0.0.256,192.0.2.7"), istioSel, []string{"x/y/z.example.org", "ok.example.org"}))
	broken := istioGateway("broken", nil, istioSel)
	broken.Object["spec"].(map[string]any)["servers"] = "not a list"
	collectortest.CreateObject(t, dc, istioGateways, ns, broken)
	collectortest.StartCollector(t, istioConfig(ns, "istio-gateway"))
	collectortest.WaitState(t, istioSubject(ns, "istio-gateway", ns, "bad"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.7")})
	collectortest.ExpectEvents(t, ns, "Gateway", "bad", `ttl "abc"`, `target "10.0.0.256"`, `x/y/z.example.org`)
	if evs := collectortest.WaitObjectEvents(t, ns, "Gateway", "broken", 1); !strings.Contains(evs, "InvalidSpec") {
		t.Errorf("broken Gateway events:\n%s", evs)
	}
	if got := collectortest.InvalidInput(t, "istio-gateway", "InvalidAnnotation") - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}
}

// A change of an ingress Service republishes the Gateways selecting it and
// the VirtualServices bound to them, and nothing else; a change of a
// Gateway's hosts republishes the VirtualServices bound to it.
func TestIstioIncremental(t *testing.T) {
	dc := installIstio(t)
	ns := collectortest.NewNamespace(t)
	svc := createIngressService(t, ns, "ingressgateway", nil, "192.0.2.1")
	createIngressService(t, ns, "internal", nil, "10.9.0.1")
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("public", nil, istioSel, []string{"*.example.org"}))
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("private", nil, map[string]string{"istio": "internal"}, []string{"*.internal.example.org"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("app", nil, []string{"app.example.org"}, []string{"public"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("db", nil, []string{"db.internal.example.org"}, []string{"private"}))
	collectortest.StartCollector(t, istioConfig(ns, "istio-gateway", "istio-virtualservice"))
	subjects := map[string]string{
		"public":  istioSubject(ns, "istio-gateway", ns, "public"),
		"private": istioSubject(ns, "istio-gateway", ns, "private"),
		"app":     istioSubject(ns, "istio-virtualservice", ns, "app"),
		"db":      istioSubject(ns, "istio-virtualservice", ns, "db"),
	}
	collectortest.WaitState(t, subjects["public"], []events.Endpoint{collectortest.EP("*.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, subjects["private"], []events.Endpoint{collectortest.EP("*.internal.example.org", "A", "10.9.0.1")})
	collectortest.WaitState(t, subjects["app"], []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, subjects["db"], []events.Endpoint{collectortest.EP("db.internal.example.org", "A", "10.9.0.1")})
	before := map[string]uint64{}
	for k, s := range subjects {
		before[k] = collectortest.Count(t, s)
	}
	skipped := collectortest.PublishSkipped(t, "istio-gateway") +
		collectortest.PublishSkipped(t, "istio-virtualservice")

	collectortest.SetLoadBalancer(t, svc, corev1.LoadBalancerIngress{IP: "192.0.2.2"})
	collectortest.WaitState(t, subjects["public"], []events.Endpoint{collectortest.EP("*.example.org", "A", "192.0.2.2")})
	collectortest.WaitState(t, subjects["app"], []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.2")})

	// The Gateway stops admitting app.example.org: the VirtualService loses it.
	g, err := dc.Resource(istioGateways).Namespace(ns).Get(t.Context(), "public", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Object["spec"].(map[string]any)["servers"] = []any{map[string]any{"hosts": []any{"www.example.org"}}}
	if _, err := dc.Resource(istioGateways).Namespace(ns).Update(t.Context(), g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subjects["public"], []events.Endpoint{collectortest.EP("www.example.org", "A", "192.0.2.2")})
	collectortest.WaitState(t, subjects["app"], nil)

	// Barrier: a new Gateway, processed after everything before it.
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("zz-barrier", collectortest.Ann("target", "192.0.2.254"), nil, []string{"barrier.example.org"}))
	collectortest.WaitState(t, istioSubject(ns, "istio-gateway", ns, "zz-barrier"), []events.Endpoint{collectortest.EP("barrier.example.org", "A", "192.0.2.254")})
	for k, want := range map[string]uint64{"public": before["public"] + 2, "app": before["app"] + 2, "private": before["private"], "db": before["db"]} {
		if got := collectortest.Count(t, subjects[k]); got != collectortest.AfterTombstone(t, subjects[k], want) {
			t.Errorf("%s: %d messages, want %d", k, got, want)
		}
	}
	after := collectortest.PublishSkipped(t, "istio-gateway") +
		collectortest.PublishSkipped(t, "istio-virtualservice")
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
	cfg := istioConfig(collectortest.NewNamespace(t), "istio-gateway", "istio-virtualservice")
	clusterName := cfg.ClusterName
	cfg.Namespace = ns
	cfg.RESTConfig = other.Config
	cfg.Workers = 1
	c, err := collector.New(cfg, collectortest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	collectortest.RunCollector(t, c)

	if err := other.InstallCRDs(istioCRDDir); err != nil {
		t.Fatal(err)
	}
	dc := collectortest.DynamicClient(t, other.Config)
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
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("gw", nil, istioSel, []string{"*.example.org"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"app.example.org"}, []string{"gw"}))
	collectortest.WaitState(t, istioSubject(clusterName, "istio-gateway", ns, "gw"), []events.Endpoint{collectortest.EP("*.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, istioSubject(clusterName, "istio-virtualservice", ns, "vs"), []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1")})
}

// The ingress annotation on a Gateway: targets from the named Ingress's
// load balancer status, not the Services; a change of that status
// republishes the Gateway and the VirtualServices bound to it.
func TestIstioGatewayIngressAnnotation(t *testing.T) {
	dc := installIstio(t)
	ns := collectortest.NewNamespace(t)
	ingressGW.create(t, ns)
	edge := collectortest.CreateIngress(t, ns, collectortest.Ingress("edge", nil, []string{"edge.example.org"}), collectortest.IngressLB("203.0.113.5", "lb.edge.example.net"))
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("by-name", collectortest.Ann("ingress", "edge"), istioSel, []string{"a.example.org"}))
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("by-ref", collectortest.Ann("ingress", ns+"/edge"), istioSel, []string{"b.example.org"}))
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("missing", collectortest.Ann("ingress", "nope"), istioSel, []string{"c.example.org"}))
	collectortest.CreateObject(t, dc, istioGateways, ns, istioGateway("malformed", collectortest.Ann("ingress", "a/b/c", "target", ""), istioSel, []string{"d.example.org"}))
	collectortest.CreateObject(t, dc, istioVirtualServices, ns, istioVirtualService("vs", nil, []string{"a.example.org"}, []string{"by-name"}))
	collectortest.StartCollector(t, istioConfig(ns, "istio-gateway", "istio-virtualservice"))
	gwSubj := func(n string) string { return istioSubject(ns, "istio-gateway", ns, n) }
	vsSubj := istioSubject(ns, "istio-virtualservice", ns, "vs")
	collectortest.WaitState(t, gwSubj("by-name"), []events.Endpoint{collectortest.EP("a.example.org", "A", "203.0.113.5"), collectortest.EP("a.example.org", "CNAME", "lb.edge.example.net")})
	collectortest.WaitState(t, gwSubj("by-ref"), []events.Endpoint{collectortest.EP("b.example.org", "A", "203.0.113.5"), collectortest.EP("b.example.org", "CNAME", "lb.edge.example.net")})
	collectortest.WaitState(t, vsSubj, []events.Endpoint{collectortest.EP("a.example.org", "A", "203.0.113.5"), collectortest.EP("a.example.org", "CNAME", "lb.edge.example.net")})
	collectortest.ExpectEvents(t, ns, "Gateway", "malformed", `ingress "a/b/c"`)
	for _, n := range []string{"missing", "malformed"} {
		if s, ok := collectortest.LastState(t, gwSubj(n)); ok {
			t.Errorf("%s published %v, want nothing", n, collectortest.Render(s.Endpoints))
		}
	}

	edge.Status.LoadBalancer.Ingress = collectortest.IngressLB("203.0.113.6")
	if _, err := collectortest.Cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), edge, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, gwSubj("by-name"), []events.Endpoint{collectortest.EP("a.example.org", "A", "203.0.113.6")})
	collectortest.WaitState(t, gwSubj("by-ref"), []events.Endpoint{collectortest.EP("b.example.org", "A", "203.0.113.6")})
	collectortest.WaitState(t, vsSubj, []events.Endpoint{collectortest.EP("a.example.org", "A", "203.0.113.6")})
}
