package gloo_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

const vsKind, gwKind = "*v1.VirtualService", "*v1.Gateway"

func vsAnn(ttl, country, id string) map[string]string {
	return collectortest.Ann("ttl", ttl, "aws-geolocation-country-code", country, "set-identifier", id)
}

// expectExactly waits for subj's state and checks its set identifiers
// and provider-specific properties too, which the rendering WaitState
// compares leaves out.
func expectExactly(t *testing.T, subj string, want ...events.Endpoint) {
	t.Helper()
	s := collectortest.WaitState(t, subj, want)
	events.SortEndpoints(want)
	for i, e := range s.Endpoints {
		w := want[i]
		if e.SetIdentifier != w.SetIdentifier || !reflect.DeepEqual(e.ProviderSpecific, w.ProviderSpecific) {
			t.Errorf("%s %s: set-identifier %q, properties %v; want %q, %v", e.DNSName, e.RecordType,
				e.SetIdentifier, e.ProviderSpecific, w.SetIdentifier, w.ProviderSpecific)
		}
	}
}

// ExternalDNS v0.21's TestGlooSource: the same five Proxies, Services,
// VirtualServices, Gateway and Ingress (the namespaces "internal",
// "external" and "internal-static" are namespaces of the test's own), and
// the same eleven endpoints, here per Proxy.
func TestGlooExternalDNSCases(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t) // ExternalDNS' gloo-system
	internal, external, static := collectortest.NewNamespace(t), collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	unknown := source{"*v1.Unknown", "unknown", "my-unknown-svc"}

	create(t, dc, proxies, ns, proxy("internal", nil, nil,
		vhost{domains: []string{"a.test", "b.test"}, sources: []source{unknown}},
		vhost{domains: []string{"c.test"}, sources: []source{{vsKind, internal, "my-internal-svc"}}}))
	proxyService(t, ns, "internal", corev1.ServiceTypeLoadBalancer, "203.0.113.1", "203.0.113.2", "203.0.113.3")
	create(t, dc, virtualServices, internal, virtualService("my-internal-svc", vsAnn("42", "LU", "identifier")))

	create(t, dc, proxies, ns, proxy("external", nil, nil,
		vhost{domains: []string{"d.test"}, sources: []source{unknown}},
		vhost{domains: []string{"e.test"}, sources: []source{{vsKind, external, "my-external-svc"}}}))
	proxyService(t, ns, "external", corev1.ServiceTypeLoadBalancer, "a.example.org", "b.example.org", "c.example.org")
	create(t, dc, virtualServices, external, virtualService("my-external-svc", vsAnn("24", "JP", "identifier-external")))

	create(t, dc, proxies, ns, proxy("internal-static", nil, nil,
		vhost{domains: []string{"f.test", "g.test"}, sources: []source{unknown}, static: true},
		vhost{domains: []string{"h.test"}, sources: []source{{vsKind, static, "my-internal-static-svc"}}, static: true}))
	proxyService(t, ns, "internal-static", corev1.ServiceTypeLoadBalancer, "203.0.115.1", "203.0.115.2", "203.0.115.3")
	create(t, dc, virtualServices, static, virtualService("my-internal-static-svc", vsAnn("420", "ES", "identifier")))

	create(t, dc, proxies, ns, proxy("target-ann", collectortest.Ann("target", "203.2.45.7"), nil,
		vhost{domains: []string{"i.test"}, sources: []source{unknown}},
		vhost{domains: []string{"j.test"}, sources: []source{{vsKind, internal, "my-annotated-svc"}}}))
	proxyService(t, ns, "target-ann", corev1.ServiceTypeLoadBalancer, "203.1.115.1", "203.1.115.2", "203.1.115.3")
	create(t, dc, virtualServices, internal, virtualService("my-annotated-svc", vsAnn("460", "IT", "identifier-annotated")))

	create(t, dc, proxies, ns, proxy("gateway-ingress-annotated", nil, []source{{gwKind, ns, "gateway-ingress-annotated"}},
		vhost{domains: []string{"k.test"}, sources: []source{unknown}, static: true}))
	create(t, dc, gateways, ns, gateway("gateway-ingress-annotated", collectortest.Ann("ingress", ns+"/gateway-ingress-annotated")))
	collectortest.CreateIngress(t, ns, collectortest.Ingress("gateway-ingress-annotated", nil, nil), collectortest.IngressLB("example.com"))

	collectortest.StartCollector(t, config(ns))
	a := func(name string, ttl int64, targets ...string) events.Endpoint {
		return events.NewEndpoint(name, "A", ttl, targets...)
	}
	cname := func(name string, ttl int64, targets ...string) events.Endpoint {
		return events.NewEndpoint(name, "CNAME", ttl, targets...)
	}
	in := []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}
	ext := []string{"a.example.org", "b.example.org", "c.example.org"}
	st := []string{"203.0.115.1", "203.0.115.2", "203.0.115.3"}
	expectExactly(t, subject(ns, "internal"), a("a.test", 0, in...), a("b.test", 0, in...), routed(a("c.test", 42, in...), "identifier", "LU"))
	expectExactly(t, subject(ns, "external"), cname("d.test", 0, ext...), routed(cname("e.test", 24, ext...), "identifier-external", "JP"))
	expectExactly(t, subject(ns, "internal-static"), a("f.test", 0, st...), a("g.test", 0, st...), routed(a("h.test", 420, st...), "identifier", "ES"))
	expectExactly(t, subject(ns, "target-ann"), a("i.test", 0, "203.2.45.7"), routed(a("j.test", 460, "203.2.45.7"), "identifier-annotated", "IT"))
	expectExactly(t, subject(ns, "gateway-ingress-annotated"), cname("k.test", 0, "example.com"))
}

// Proxies of every --gloo-namespace are read.
func TestGlooSeveralNamespaces(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	a, b := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	create(t, dc, proxies, a, proxy("p", collectortest.Ann("target", "192.0.2.1"), nil, vhost{domains: []string{"a.example.org"}}))
	create(t, dc, proxies, b, proxy("p", collectortest.Ann("target", "192.0.2.2"), nil, vhost{domains: []string{"b.example.org"}}))
	cfg := config(a)
	cfg.Gloo.Namespaces = []string{a, b}
	collectortest.StartCollector(t, cfg)
	collectortest.WaitState(t, subject(a, "p"), []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.1")})
	collectortest.WaitState(t, events.SourceSubject(a, "gloo-proxy", b, "p"), []events.Endpoint{collectortest.EP("b.example.org", "A", "192.0.2.2")})
}

// Only the Proxies of --gloo-namespace are read; a Service that is not a
// LoadBalancer gives no target.
func TestGlooRules(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns, other := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
	create(t, dc, proxies, ns, proxy("lb", nil, nil, vhost{domains: []string{"lb.example.org."}}))
	proxyService(t, ns, "lb", corev1.ServiceTypeLoadBalancer, "192.0.2.1", "2001:db8::1")
	create(t, dc, proxies, ns, proxy("cluster-ip", nil, nil, vhost{domains: []string{"cip.example.org"}}))
	proxyService(t, ns, "cluster-ip", corev1.ServiceTypeClusterIP)
	create(t, dc, proxies, other, proxy("elsewhere", collectortest.Ann("target", "192.0.2.9"), nil, vhost{domains: []string{"x.example.org"}}))
	// Two virtual hosts with one domain: one endpoint, every target.
	create(t, dc, proxies, ns, proxy("twice", collectortest.Ann("target", "192.0.2.5"), nil,
		vhost{domains: []string{"same.example.org"}}, vhost{domains: []string{"same.example.org", "*"}}))

	collectortest.StartCollector(t, config(ns))
	collectortest.WaitState(t, subject(ns, "lb"), []events.Endpoint{collectortest.EP("lb.example.org", "A", "192.0.2.1"), collectortest.EP("lb.example.org", "AAAA", "2001:db8::1")})
	collectortest.WaitState(t, subject(ns, "twice"), []events.Endpoint{collectortest.EP("same.example.org", "A", "192.0.2.5")})
	for _, subj := range []string{subject(ns, "cluster-ip"), events.SourceSubject(ns, "gloo-proxy", other, "elsewhere")} {
		if s, ok := collectortest.LastState(t, subj); ok {
			t.Errorf("%s published %v, want nothing", subj, collectortest.Render(s.Endpoints))
		}
	}
}

// A change of a VirtualService's annotations, of the Proxy's Service, of
// the Ingress its Gateway names republishes the Proxy; a VirtualService
// or Service that goes away keeps the last published state (unknown, as
// ExternalDNS fails then) instead of taking the records back; a deleted
// Proxy is tombstoned.
func TestGlooIncremental(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	create(t, dc, proxies, ns, proxy("web", nil, nil,
		vhost{domains: []string{"web.example.org"}, sources: []source{{vsKind, ns, "web"}}, static: true}))
	svc := proxyService(t, ns, "web", corev1.ServiceTypeLoadBalancer, "192.0.2.1")
	create(t, dc, virtualServices, ns, virtualService("web", collectortest.Ann("ttl", "60")))
	create(t, dc, proxies, ns, proxy("edge", nil, []source{{gwKind, ns, "edge"}}, vhost{domains: []string{"edge.example.org"}}))
	create(t, dc, gateways, ns, gateway("edge", collectortest.Ann("ingress", "edge")))
	ing := collectortest.CreateIngress(t, ns, collectortest.Ingress("edge", nil, nil), collectortest.IngressLB("192.0.2.50"))

	collectortest.StartCollector(t, config(ns))
	web, edge := subject(ns, "web"), subject(ns, "edge")
	collectortest.WaitState(t, web, []events.Endpoint{events.NewEndpoint("web.example.org", "A", 60, "192.0.2.1")})
	collectortest.WaitState(t, edge, []events.Endpoint{collectortest.EP("edge.example.org", "A", "192.0.2.50")})

	vs, err := dc.Resource(virtualServices).Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vs.SetAnnotations(collectortest.Ann("ttl", "120"))
	if _, err := dc.Resource(virtualServices).Namespace(ns).Update(t.Context(), vs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, web, []events.Endpoint{events.NewEndpoint("web.example.org", "A", 120, "192.0.2.1")})
	collectortest.SetLoadBalancer(t, svc, corev1.LoadBalancerIngress{IP: "192.0.2.2"})
	collectortest.WaitState(t, web, []events.Endpoint{events.NewEndpoint("web.example.org", "A", 120, "192.0.2.2")})
	ing.Status.LoadBalancer.Ingress = collectortest.IngressLB("192.0.2.51")
	if _, err := collectortest.Cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, edge, []events.Endpoint{collectortest.EP("edge.example.org", "A", "192.0.2.51")})

	// The VirtualService goes: the state is unknown, nothing published.
	before := collectortest.Count(t, web)
	if err := dc.Resource(virtualServices).Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Barrier: a Proxy created after the delete, published once the
	// collector has handled everything before it.
	create(t, dc, proxies, ns, proxy("zz-barrier", collectortest.Ann("target", "192.0.2.254"), nil, vhost{domains: []string{"barrier.example.org"}}))
	collectortest.WaitState(t, subject(ns, "zz-barrier"), []events.Endpoint{collectortest.EP("barrier.example.org", "A", "192.0.2.254")})
	if got := collectortest.Count(t, web); got != before {
		t.Errorf("%s: %d messages after its VirtualService went, want %d (last state kept)", web, got, before)
	}

	if err := dc.Resource(proxies).Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, web, nil)
}
