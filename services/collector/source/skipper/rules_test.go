package skipper_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
	"github.com/zonestream/zonestream/services/collector/source/skipper"
)

// rgCase is one case: the RouteGroups of a namespace and what each must
// publish (nil or absent: nothing).
type rgCase struct {
	name   string
	cfg    func(*collector.Config)
	groups []routeGroup
	want   map[string][]events.Endpoint
	// provider is a provider-specific property every endpoint must carry.
	provider *events.ProviderSpecificProperty
}

func runRouteGroupRules(t *testing.T, cases []rgCase) {
	t.Helper()
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			for _, g := range tc.groups {
				g.create(t, dc, ns)
			}
			cfg := config(ns)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			for _, g := range tc.groups {
				if want := tc.want[g.name]; want != nil {
					s := collectortest.WaitState(t, subject(ns, g.name), want)
					for _, e := range s.Endpoints {
						if tc.provider != nil && !contains(e.ProviderSpecific, *tc.provider) {
							t.Errorf("%s: provider-specific %v, want %v among them", e.DNSName, e.ProviderSpecific, *tc.provider)
						}
					}
				}
			}
			// Once the collector is ready every object has been computed:
			// those that want nothing have published nothing.
			for _, g := range tc.groups {
				if tc.want[g.name] == nil {
					if s, ok := collectortest.LastState(t, subject(ns, g.name)); ok {
						t.Errorf("%s published %v, want nothing", g.name, collectortest.Render(s.Endpoints))
					}
				}
			}
		})
	}
}

func contains(ps []events.ProviderSpecificProperty, p events.ProviderSpecificProperty) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func cname(name, target string) events.Endpoint { return collectortest.EP(name, "CNAME", target) }

var lbHost = []string{"lb.example.org"}

// ExternalDNS v0.21's TestEndpointsFromRouteGroups, case by case. Left
// out: "Empty routegroup" (an object without name cannot be created).
func TestRouteGroupExternalDNSEndpointsFromRouteGroups(t *testing.T) {
	rg := func(ann map[string]string, hosts, lb []string) []routeGroup {
		return []routeGroup{{name: "rg1", annotations: ann, hosts: hosts, lb: lb}}
	}
	one := func(eps ...events.Endpoint) map[string][]events.Endpoint {
		return map[string][]events.Endpoint{"rg1": eps}
	}
	hosts := []string{"rg1.k8s.example"}
	runRouteGroupRules(t, []rgCase{
		{name: "Routegroup without hosts and destinations create no endpoints", groups: rg(nil, nil, nil)},
		{name: "Routegroup without hosts create no endpoints", groups: rg(nil, nil, lbHost)},
		{name: "Routegroup without destinations create no endpoints", groups: rg(nil, hosts, nil)},
		{name: "Routegroup with hosts and destinations creates an endpoint", groups: rg(nil, hosts, lbHost),
			want: one(cname("rg1.k8s.example", "lb.example.org"))},
		{name: "Routegroup with hostname annotation, creates endpoints from the annotation", groups: rg(collectortest.Ann("hostname", "my.example"), hosts, lbHost),
			want: one(cname("rg1.k8s.example", "lb.example.org"), cname("my.example", "lb.example.org"))},
		{name: "Routegroup with hosts and destinations and ignoreHostnameAnnotation creates endpoints but ignores annotation",
			cfg:    func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			groups: rg(collectortest.Ann("hostname", "my.example"), hosts, lbHost),
			want:   one(cname("rg1.k8s.example", "lb.example.org"))},
		{name: "Routegroup with hosts and destinations and ttl creates an endpoint with ttl", groups: rg(collectortest.Ann("ttl", "2189"), hosts, lbHost),
			want: one(events.NewEndpoint("rg1.k8s.example", "CNAME", 2189, "lb.example.org"))},
		{name: "Routegroup with hosts and destination IP creates an endpoint", groups: rg(nil, hosts, []string{"1.5.1.4"}),
			want: one(collectortest.EP("rg1.k8s.example", "A", "1.5.1.4"))},
		{name: "Routegroup with hosts and destination IPv6 creates an endpoint", groups: rg(nil, hosts, []string{"2001:DB8::1"}),
			want: one(collectortest.EP("rg1.k8s.example", "AAAA", "2001:DB8::1"))},
		{name: "Routegroup with hosts and mixed destinations creates endpoints", groups: rg(nil, hosts, []string{"lb.example.org", "1.5.1.4"}),
			want: one(collectortest.EP("rg1.k8s.example", "A", "1.5.1.4"), cname("rg1.k8s.example", "lb.example.org"))},
		{name: "Routegroup with hosts and mixed destinations (IPv6) creates endpoints", groups: rg(nil, hosts, []string{"lb.example.org", "2001:DB8::1"}),
			want: one(collectortest.EP("rg1.k8s.example", "AAAA", "2001:DB8::1"), cname("rg1.k8s.example", "lb.example.org"))},
		{name: "Routegroup with provider-specific annotation creates endpoint with provider-specific property",
			groups:   rg(collectortest.Ann("cloudflare-proxied", "true"), hosts, lbHost),
			want:     one(cname("rg1.k8s.example", "lb.example.org")),
			provider: &events.ProviderSpecificProperty{Name: "cloudflare/proxied", Value: "true"}},
	})
}

// ExternalDNS v0.21's TestRouteGroupsEndpoints, case by case: one
// namespace for the case's RouteGroups (ExternalDNS' spread over three,
// which changes nothing to the rules). Left out: "Empty routegroup".
func TestRouteGroupExternalDNSRouteGroupsEndpoints(t *testing.T) {
	tmpl := "{{.Metadata.Name}}.{{.Metadata.Namespace}}.example"
	withTemplate := func(combine bool) func(*collector.Config) {
		return func(c *collector.Config) { c.FQDNTemplate, c.CombineFQDNAnnotation = tmpl, combine }
	}
	class := func(v string) map[string]string { return map[string]string{"kubernetes.io/ingress.class": v} }
	four := func(a1, a2, a3 map[string]string) []routeGroup {
		return []routeGroup{
			{name: "rg1", annotations: a1, hosts: []string{"rg1.k8s.example"}, lb: lbHost},
			{name: "rg2", annotations: a2, hosts: []string{"rg2.k8s.example"}, lb: lbHost},
			{name: "rg3", annotations: a3, hosts: []string{"rg3.k8s.example"}, lb: lbHost},
			{name: "rg", hosts: []string{"rg.k8s.example"}, lb: []string{"lb2.example.org"}},
		}
	}
	rg1 := []events.Endpoint{cname("rg1.k8s.example", "lb.example.org")}
	rg2 := []events.Endpoint{cname("rg2.k8s.example", "lb.example.org")}
	rg3 := []events.Endpoint{cname("rg3.k8s.example", "lb.example.org")}
	rgx := []events.Endpoint{cname("rg.k8s.example", "lb2.example.org")}
	runRouteGroupRules(t, []rgCase{
		{name: "Single routegroup should return endpoints", groups: []routeGroup{{name: "rg1", hosts: []string{"rg1.k8s.example"}, lb: lbHost}},
			want: map[string][]events.Endpoint{"rg1": rg1}},
		{name: "Single routegroup without combineFQDNAnnotation with fqdn template should return endpoints not from fqdnTemplate",
			cfg: withTemplate(false), groups: []routeGroup{{name: "rg1", hosts: []string{"rg1.k8s.example"}, lb: lbHost}},
			want: map[string][]events.Endpoint{"rg1": rg1}},
		{name: "Single routegroup with TTL should return endpoint with TTL",
			groups: []routeGroup{{name: "rg1", annotations: collectortest.Ann("ttl", "2189"), hosts: []string{"rg1.k8s.example"}, lb: lbHost}},
			want:   map[string][]events.Endpoint{"rg1": {events.NewEndpoint("rg1.k8s.example", "CNAME", 2189, "lb.example.org")}}},
		{name: "Routegroup with hosts and mixed destinations creates endpoints",
			groups: []routeGroup{{name: "rg1", hosts: []string{"rg1.k8s.example"}, lb: []string{"lb.example.org", "1.5.1.4"}}},
			want:   map[string][]events.Endpoint{"rg1": {collectortest.EP("rg1.k8s.example", "A", "1.5.1.4"), cname("rg1.k8s.example", "lb.example.org")}}},
		{name: "multiple routegroups should return endpoints", groups: four(nil, nil, nil),
			want: map[string][]events.Endpoint{"rg1": rg1, "rg2": rg2, "rg3": rg3, "rg": rgx}},
		{name: "multiple routegroups with filter annotations should return only filtered endpoints",
			cfg:    func(c *collector.Config) { c.AnnotationFilter = "kubernetes.io/ingress.class=skipper" },
			groups: four(class("skipper"), class("nginx"), class("")),
			want:   map[string][]events.Endpoint{"rg1": rg1}},
		{name: "multiple routegroups with set operation annotation filter should return only filtered endpoints",
			cfg:    func(c *collector.Config) { c.AnnotationFilter = "kubernetes.io/ingress.class in (nginx, skipper)" },
			groups: four(class("skipper"), class("nginx"), class("")),
			want:   map[string][]events.Endpoint{"rg1": rg1, "rg2": rg2}},
		{name: "multiple routegroups with controller annotation filter should not return filtered endpoints",
			groups: four(collectortest.Ann("controller", "dns-controller"), collectortest.Ann("controller", "dns"), nil),
			want:   map[string][]events.Endpoint{"rg1": rg1, "rg3": rg3, "rg": rgx}},
	})
	// The cases whose template names the namespace, which is the case's
	// own here.
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	for _, tc := range []struct {
		name    string
		combine bool
		hosts   []string
		want    func(ns string) []events.Endpoint
	}{
		{name: "Single routegroup with combineFQDNAnnotation with fqdn template should return endpoints from fqdnTemplate and routegroup",
			combine: true, hosts: []string{"rg1.k8s.example"},
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{cname("rg1.k8s.example", "lb.example.org"), cname("rg1."+ns+".example", "lb.example.org")}
			}},
		{name: "Single routegroup without, with fqdn template should return endpoints from fqdnTemplate",
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{cname("rg1."+ns+".example", "lb.example.org")}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			routeGroup{name: "rg1", hosts: tc.hosts, lb: lbHost}.create(t, dc, ns)
			collectortest.StartAndExpect(t, config(ns), withTemplate(tc.combine), subject(ns, "rg1"), tc.want, ns)
		})
	}
}

// Skipper's controller changing the load balancer republishes the
// RouteGroup; a delete tombstones it; bad annotations are reported on it
// (a Warning Event, the invalid-input metric) and the rest is published.
func TestRouteGroupIncrementalAndProblems(t *testing.T) {
	dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
	ns := collectortest.NewNamespace(t)
	routeGroup{name: "app", hosts: []string{"app.example.org"}, lb: lbHost}.create(t, dc, ns)
	routeGroup{name: "bad", annotations: collectortest.Ann("ttl", "abc", "hostname", "bad..example.org,ok.example.org"),
		hosts: []string{"bad.example.org"}, lb: []string{"192.0.2.9"}}.create(t, dc, ns)
	before := collectortest.InvalidInput(t, skipper.Name, "InvalidAnnotation")
	collectortest.StartCollector(t, config(ns))
	collectortest.WaitState(t, subject(ns, "app"), []events.Endpoint{cname("app.example.org", "lb.example.org")})
	collectortest.WaitState(t, subject(ns, "bad"), []events.Endpoint{
		collectortest.EP("bad.example.org", "A", "192.0.2.9"), collectortest.EP("ok.example.org", "A", "192.0.2.9")})
	collectortest.ExpectEvents(t, ns, "RouteGroup", "bad", `ttl "abc"`, "bad..example.org")
	if got := collectortest.InvalidInput(t, skipper.Name, "InvalidAnnotation") - before; got < 2 {
		t.Errorf("metric grew by %v, want >= 2", got)
	}

	u, err := dc.Resource(routeGroups).Namespace(ns).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setLoadBalancer(t, dc, u, "192.0.2.1")
	collectortest.WaitState(t, subject(ns, "app"), []events.Endpoint{collectortest.EP("app.example.org", "A", "192.0.2.1")})
	if err := dc.Resource(routeGroups).Namespace(ns).Delete(t.Context(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subject(ns, "app"), nil)
}
