package ambassador_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/ambassador"
)

// In a case's annotations, svcRef stands for "<namespace>/<name>" of the
// case's Service, which lives in a namespace of its own, as Ambassador's
// does, and svcDotted for "<name>.<namespace>".
const (
	svcRef    = "SVC"
	svcDotted = "NAME.NS"
)

type hostCase struct {
	name        string
	cfg         func(*collector.Config)
	svc         lbService
	hostname    string
	annotations map[string]string
	labels      map[string]string
	want        []events.Endpoint // nil: nothing published
	// provider is the provider-specific property every endpoint must carry.
	provider *events.ProviderSpecificProperty
}

func runHostRules(t *testing.T, cases []hostCase) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, svcNs := collectortest.NewNamespace(t), collectortest.NewNamespace(t)
			svc := tc.svc
			if svc.name == "" {
				svc.name = "ambassador"
			}
			svc.create(t, svcNs)
			ann := map[string]string{}
			for k, v := range tc.annotations {
				v = strings.ReplaceAll(v, svcDotted, svc.name+"."+svcNs)
				ann[k] = strings.ReplaceAll(v, svcRef, svcNs+"/"+svc.name)
			}
			hostname := tc.hostname
			if hostname == "" {
				hostname = "www.example.org"
			}
			collectortest.CreateObject(t, dc, hosts, ns, host("basic-host", hostname, ann, tc.labels))
			var want func(string) []events.Endpoint
			if tc.want != nil {
				want = collectortest.Fixed(tc.want...)
			}
			subj := subject(ns, ns, "basic-host")
			collectortest.StartAndExpect(t, config(ns), tc.cfg, subj, want, ns)
			if tc.provider != nil {
				s, _ := collectortest.LastState(t, subj)
				for _, e := range s.Endpoints {
					if !slicesContain(e.ProviderSpecific, *tc.provider) {
						t.Errorf("%s %s: provider-specific %v, want %v among them", e.DNSName, e.RecordType, e.ProviderSpecific, *tc.provider)
					}
				}
			}
		})
	}
}

func slicesContain(ps []events.ProviderSpecificProperty, p events.ProviderSpecificProperty) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func withAnn(kv ...string) map[string]string {
	m := collectortest.Ann(kv...)
	m[ambassador.AnnotationService] = svcRef
	return m
}

var (
	lb1111  = lbService{name: "ambassador", lb: [][2]string{lb("1.1.1.1")}}
	lbBoth  = lbService{lb: [][2]string{{"1.1.1.1", "dns.google"}}}
	a1111   = collectortest.EP("www.example.org", "A", "1.1.1.1")
	cnameLB = collectortest.EP("www.example.org", "CNAME", "dns.google")
	ingress = "kubernetes.io/ingress.class"
)

// ExternalDNS v0.21's TestAmbassadorHostSource, case by case (same
// titles, objects and expected endpoints).
func TestAmbassadorHostExternalDNSCases(t *testing.T) {
	filter := func(annotationFilter, labelFilter string) func(*collector.Config) {
		return func(c *collector.Config) { c.AnnotationFilter, c.LabelFilter = annotationFilter, labelFilter }
	}
	runHostRules(t, []hostCase{
		{name: "Simple host", svc: lb1111, annotations: withAnn(), want: []events.Endpoint{a1111}},
		{name: "Service with load balancer hostname", svc: lbService{lb: [][2]string{lb("dns.google")}}, annotations: withAnn(),
			want: []events.Endpoint{cnameLB}},
		{name: "Service with external IP", svc: lbService{externalIPs: []string{"2.2.2.2"}, lb: [][2]string{lb("1.1.1.1")}}, annotations: withAnn(),
			want: []events.Endpoint{collectortest.EP("www.example.org", "A", "2.2.2.2")}},
		{name: "Host with target annotation", svc: lb1111, annotations: withAnn("target", "3.3.3.3"),
			want: []events.Endpoint{collectortest.EP("www.example.org", "A", "3.3.3.3")}},
		{name: "Host with TTL annotation", svc: lb1111, annotations: withAnn("ttl", "180"),
			want: []events.Endpoint{events.NewEndpoint("www.example.org", "A", 180, "1.1.1.1")}},
		{name: "Host with provider specific annotation", svc: lb1111, annotations: withAnn("cloudflare-proxied", "true"),
			want:     []events.Endpoint{a1111},
			provider: &events.ProviderSpecificProperty{Name: "cloudflare/proxied", Value: "true"}},
		{name: "Host with missing Ambassador annotation", svc: lb1111},
		{name: "valid matching annotation filter expression", svc: lb1111, cfg: filter(ingress+" in (external-ingress)", ""),
			annotations: withAnn(ingress, "external-ingress"), want: []events.Endpoint{a1111}},
		{name: "valid non-matching annotation filter expression", svc: lb1111, cfg: filter(ingress+" in (external-ingress)", ""),
			annotations: withAnn(ingress, "internal-ingress")},
		{name: "invalid annotation filter expression", svc: lb1111, cfg: filter(ingress+" in (invalid-ingress)", ""),
			annotations: withAnn(ingress, "external-ingress")},
		{name: "valid non-matching annotation filter label", svc: lb1111, cfg: filter(ingress+"=external-ingress", ""),
			annotations: withAnn(ingress, "internal-ingress")},
		{name: "valid non-matching label filter expression", svc: lb1111, cfg: filter("", ingress+"=external-ingress"),
			annotations: withAnn(ingress, "internal-ingress"), labels: map[string]string{ingress: "internal-ingress"}},
		{name: "valid matching label filter expression for single host", svc: lbBoth, cfg: filter("", ingress+"=external-ingress"),
			annotations: withAnn(), labels: map[string]string{ingress: "external-ingress"}, want: []events.Endpoint{a1111, cnameLB}},
		{name: "valid matching label filter expression and matching annotation filter", svc: lbBoth,
			cfg:         filter(ingress+" in (external-ingress)", ingress+"=external-ingress"),
			annotations: withAnn(ingress, "external-ingress"), labels: map[string]string{ingress: "external-ingress"},
			want: []events.Endpoint{a1111, cnameLB}},
		{name: "valid non matching label filter expression and valid matching annotation filter", svc: lbBoth,
			cfg:         filter(ingress+" in (external-ingress)", ingress+"=external-ingress"),
			annotations: withAnn(ingress, "external-ingress"), labels: map[string]string{ingress: "internal-ingress"}},
		{name: "valid matching label filter expression and non matching annotation filter", svc: lbBoth,
			cfg:         filter(ingress+" in (external-ingress)", ingress+"=external-ingress"),
			annotations: withAnn(ingress, "internal-ingress"), labels: map[string]string{ingress: "external-ingress"}},
	})
}

// The rules ExternalDNS' table does not show: the other spellings of the
// Service reference, set identifiers, names the source skips.
func TestAmbassadorHostRules(t *testing.T) {
	runHostRules(t, []hostCase{
		{name: "name.namespace reference", svc: lb1111,
			annotations: map[string]string{ambassador.AnnotationService: svcDotted}, want: []events.Endpoint{a1111}},
		{name: "set-identifier", svc: lb1111, annotations: withAnn("set-identifier", "eu"),
			want: []events.Endpoint{collectortest.WithSetID(a1111, "eu")}},
		{name: "IPv6 load balancer is AAAA", svc: lbService{lb: [][2]string{lb("2001:db8::1")}}, annotations: withAnn(),
			want: []events.Endpoint{collectortest.EP("www.example.org", "AAAA", "2001:db8::1")}},
		{name: "wildcard hostname", svc: lb1111, hostname: "*.example.org", annotations: withAnn(),
			want: []events.Endpoint{collectortest.EP("*.example.org", "A", "1.1.1.1")}},
		{name: "hostname * wants nothing", svc: lb1111, hostname: "*", annotations: withAnn()},
		{name: "hostname annotation is not read", svc: lb1111, annotations: withAnn("hostname", "other.example.org"),
			want: []events.Endpoint{a1111}},
		{name: "Service without address", svc: lbService{}, annotations: withAnn()},
	})
}

// Bad input is reported on the Host (a Warning Event, the invalid-input
// metric) and publishes nothing for it; a Service outside --namespace is
// reported, not taken for deleted.
func TestAmbassadorHostInvalidInputReported(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	lb1111.create(t, ns)
	before := collectortest.InvalidInput(t, ambassador.Name, ambassador.ReasonInvalidServiceReference)
	missing := collectortest.InvalidInput(t, ambassador.Name, ambassador.ReasonServiceNotFound)
	collectortest.CreateObject(t, dc, hosts, ns, host("bad-ref", "a.example.org",
		map[string]string{ambassador.AnnotationService: ns + "/ambassador/extra"}, nil))
	collectortest.CreateObject(t, dc, hosts, ns, host("no-svc", "b.example.org",
		map[string]string{ambassador.AnnotationService: ns + "/nothere"}, nil))
	collectortest.CreateObject(t, dc, hosts, ns, host("bad-ttl", "c.example.org",
		map[string]string{ambassador.AnnotationService: ns + "/ambassador", collectortest.Alpha + "ttl": "abc"}, nil))
	cfg := config(ns)
	cfg.Namespace = ns
	collectortest.StartCollector(t, cfg)
	collectortest.WaitState(t, subject(ns, ns, "bad-ttl"), []events.Endpoint{collectortest.EP("c.example.org", "A", "1.1.1.1")})
	collectortest.ExpectEvents(t, ns, "Host", "bad-ref", "invalid external-dns service")
	collectortest.ExpectEvents(t, ns, "Host", "no-svc", "not found")
	collectortest.ExpectEvents(t, ns, "Host", "bad-ttl", `ttl "abc"`)
	if got := collectortest.InvalidInput(t, ambassador.Name, ambassador.ReasonInvalidServiceReference) - before; got < 1 {
		t.Errorf("InvalidServiceReference grew by %v, want >= 1", got)
	}
	if got := collectortest.InvalidInput(t, ambassador.Name, ambassador.ReasonServiceNotFound) - missing; got < 1 {
		t.Errorf("ServiceNotFound grew by %v, want >= 1", got)
	}
	for _, name := range []string{"bad-ref", "no-svc"} {
		if s, ok := collectortest.LastState(t, subject(ns, ns, name)); ok && len(s.Endpoints) > 0 {
			t.Errorf("%s published %v, want nothing", name, collectortest.Render(s.Endpoints))
		}
	}
}

// A Service's change of load balancer republishes the Hosts naming it; a
// Service created after its Host fills it in; a deleted Host is
// tombstoned.
func TestAmbassadorHostIncremental(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	svc := lb1111.create(t, ns)
	collectortest.CreateObject(t, dc, hosts, ns, host("web", "web.example.org", map[string]string{ambassador.AnnotationService: ns + "/ambassador"}, nil))
	collectortest.CreateObject(t, dc, hosts, ns, host("late", "late.example.org", map[string]string{ambassador.AnnotationService: "edge." + ns}, nil))
	cfg := config(ns)
	cfg.Namespace = ns
	collectortest.StartCollector(t, cfg)
	collectortest.WaitState(t, subject(ns, ns, "web"), []events.Endpoint{collectortest.EP("web.example.org", "A", "1.1.1.1")})

	collectortest.SetLoadBalancer(t, svc, corev1.LoadBalancerIngress{IP: "192.0.2.2"})
	collectortest.WaitState(t, subject(ns, ns, "web"), []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.2")})

	lbService{name: "edge", lb: [][2]string{lb("lb.example.net")}}.create(t, ns)
	collectortest.WaitState(t, subject(ns, ns, "late"), []events.Endpoint{collectortest.EP("late.example.org", "CNAME", "lb.example.net")})

	if err := dc.Resource(hosts).Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subject(ns, ns, "web"), nil)
}
