package service_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

type ruleCase struct {
	name string
	cfg  func(*collector.Config)
	svc  *corev1.Service
	lb   []corev1.LoadBalancerIngress
	// want computes the expected endpoints from the created Service (for
	// its allocated cluster IP); nil: nothing is published.
	want func(svc *corev1.Service) []events.Endpoint
	// barrier adapts the barrier Service to the case's filters.
	barrier func(*corev1.Service)
}

func withSpec(s *corev1.Service, f func(*corev1.ServiceSpec)) *corev1.Service {
	f(&s.Spec)
	return s
}

func withLabels(s *corev1.Service, l map[string]string) *corev1.Service {
	s.Labels = l
	return s
}

func eps(e ...events.Endpoint) func(*corev1.Service) []events.Endpoint {
	return func(*corev1.Service) []events.Endpoint { return e }
}

func host(h string) corev1.LoadBalancerIngress { return corev1.LoadBalancerIngress{Hostname: h} }

const (
	lbT  = corev1.ServiceTypeLoadBalancer
	cipT = corev1.ServiceTypeClusterIP
	extT = corev1.ServiceTypeExternalName
	npT  = corev1.ServiceTypeNodePort
)

// runRules runs every case through a real apiserver and a collector of its
// own (namespace and cluster name per case) and checks what is on the bus.
func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collector.Config{ClusterName: ns, Namespace: ns}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			created := collectortest.CreateService(t, ns, tc.svc, tc.lb...)
			subj := collectortest.ServiceSubject(ns, ns, tc.svc.Name)
			if tc.want == nil {
				collectortest.Barrier(t, ns, ns, tc.barrier)
				if s, ok := collectortest.LastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", collectortest.Render(s.Endpoints))
				}
				return
			}
			s := collectortest.WaitState(t, subj, tc.want(created))
			wantRef := events.ObjectRef{Cluster: ns, Source: "service", Namespace: ns, Name: tc.svc.Name}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
		})
	}
}

func clusterIPEp(name string) func(*corev1.Service) []events.Endpoint {
	return func(s *corev1.Service) []events.Endpoint {
		return []events.Endpoint{collectortest.EP(name, "A", s.Spec.ClusterIP)}
	}
}

// Domain names: the hostname and internal-hostname annotations, under both
// prefixes, comma-separated, and --ignore-hostname-annotation.
func TestRuleHostnameAnnotations(t *testing.T) {
	runRules(t, []ruleCase{
		{name: "alpha prefix", svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "web.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("web.example.org", "A", "192.0.2.1"))},
		{name: "stable prefix", svc: collectortest.Service("web", lbT, map[string]string{collectortest.Stable + "hostname": "web.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("web.example.org", "A", "192.0.2.1"))},
		{name: "comma separated, trailing dot, spaces", svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "a.example.org., b.example.org"}),
			lb:   []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: eps(collectortest.EP("a.example.org", "A", "192.0.2.1"), collectortest.EP("b.example.org", "A", "192.0.2.1"))},
		{name: "internal-hostname stable prefix", svc: collectortest.Service("web", cipT, map[string]string{collectortest.Stable + "internal-hostname": "in.example.org"}),
			want: clusterIPEp("in.example.org")},
		{name: "invalid hostname skipped, valid kept", svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "ok.example.org,bad..example.org,-x-.example.org,sp ace.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("ok.example.org", "A", "192.0.2.1"))},
		{name: "wildcard hostname", svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "*.apps.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("*.apps.example.org", "A", "192.0.2.1"))},
		{name: "no annotation no template", svc: collectortest.Service("web", lbT, nil), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}},
	})
}

// Domain names from --fqdn-template, alone or combined with annotations.
func TestRuleFQDNTemplate(t *testing.T) {
	tmpl := func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.tmpl.org, {{.Name}}-2.tmpl.org" }
	runRules(t, []ruleCase{
		{name: "template when no annotation", cfg: tmpl, svc: collectortest.Service("web", lbT, nil), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("web."+s.Namespace+".tmpl.org", "A", "192.0.2.1"), collectortest.EP("web-2.tmpl.org", "A", "192.0.2.1")}
			}},
		{name: "annotation wins without combine", cfg: tmpl, svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "web.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("web.example.org", "A", "192.0.2.1"))},
		{name: "combine-fqdn-annotation", cfg: func(c *collector.Config) { tmpl(c); c.CombineFQDNAnnotation = true },
			svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "web.example.org"}), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.1"),
					collectortest.EP("web."+s.Namespace+".tmpl.org", "A", "192.0.2.1"), collectortest.EP("web-2.tmpl.org", "A", "192.0.2.1")}
			}},
		{name: "template with ignore-hostname-annotation", cfg: func(c *collector.Config) { tmpl(c); c.IgnoreHostnameAnnotation = true },
			svc: collectortest.Service("web", lbT, map[string]string{collectortest.Alpha + "hostname": "web.example.org", collectortest.Alpha + "internal-hostname": "in.example.org"}), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("web."+s.Namespace+".tmpl.org", "A", "192.0.2.1"), collectortest.EP("web-2.tmpl.org", "A", "192.0.2.1")}
			}},
		{name: "template functions and Kind", cfg: func(c *collector.Config) {
			c.FQDNTemplate = `{{ toLower .Kind }}-{{ trimPrefix .Name "app-" }}.tmpl.org`
		}, svc: collectortest.Service("app-shop", lbT, nil), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: eps(collectortest.EP("service-shop.tmpl.org", "A", "192.0.2.1"))},
	})
}

// Targets of LoadBalancer Services.
func TestRuleLoadBalancerTargets(t *testing.T) {
	h := map[string]string{collectortest.Alpha + "hostname": "lb.example.org"}
	runRules(t, []ruleCase{
		{name: "status ip", svc: collectortest.Service("lb", lbT, h), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1"), collectortest.LoadBalancerIP("192.0.2.2")},
			want: eps(collectortest.EP("lb.example.org", "A", "192.0.2.1", "192.0.2.2"))},
		{name: "status hostname is CNAME", svc: collectortest.Service("lb", lbT, h), lb: []corev1.LoadBalancerIngress{host("elb.cloud.example.net")},
			want: eps(collectortest.EP("lb.example.org", "CNAME", "elb.cloud.example.net"))},
		{name: "status ip and hostname", svc: collectortest.Service("lb", lbT, h),
			lb:   []corev1.LoadBalancerIngress{{IP: "192.0.2.1", Hostname: "elb.cloud.example.net"}},
			want: eps(collectortest.EP("lb.example.org", "A", "192.0.2.1"), collectortest.EP("lb.example.org", "CNAME", "elb.cloud.example.net"))},
		{name: "status ipv6 is AAAA", svc: collectortest.Service("lb", lbT, h), lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("2001:db8::1"), collectortest.LoadBalancerIP("192.0.2.1")},
			want: eps(collectortest.EP("lb.example.org", "A", "192.0.2.1"), collectortest.EP("lb.example.org", "AAAA", "2001:db8::1"))},
		{name: "externalIPs win over status", svc: withSpec(collectortest.Service("lb", lbT, h), func(s *corev1.ServiceSpec) { s.ExternalIPs = []string{"198.51.100.7"} }),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: eps(collectortest.EP("lb.example.org", "A", "198.51.100.7"))},
		{name: "internal-hostname uses clusterIP", svc: collectortest.Service("lb", lbT, map[string]string{collectortest.Alpha + "internal-hostname": "in.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}, want: clusterIPEp("in.example.org")},
		{name: "hostname and internal-hostname", svc: collectortest.Service("lb", lbT, map[string]string{collectortest.Alpha + "hostname": "lb.example.org", collectortest.Alpha + "internal-hostname": "in.example.org"}),
			lb: []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")},
			want: func(s *corev1.Service) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("lb.example.org", "A", "192.0.2.1"), collectortest.EP("in.example.org", "A", s.Spec.ClusterIP)}
			}},
		{name: "no status yet", svc: collectortest.Service("lb", lbT, h)},
	})
}

// Targets of ClusterIP Services (not headless), and --publish-internal-services.
func TestRuleClusterIPTargets(t *testing.T) {
	runRules(t, []ruleCase{
		{name: "hostname gives nothing", svc: collectortest.Service("c", cipT, map[string]string{collectortest.Alpha + "hostname": "c.example.org"})},
		{name: "internal-hostname gives clusterIP", svc: collectortest.Service("c", cipT, map[string]string{collectortest.Alpha + "internal-hostname": "c.example.org"}),
			want: clusterIPEp("c.example.org")},
		{name: "publish-internal-services", cfg: func(c *collector.Config) { c.Service.PublishInternal = true },
			svc: collectortest.Service("c", cipT, map[string]string{collectortest.Alpha + "hostname": "c.example.org"}), want: clusterIPEp("c.example.org")},
		{name: "headless without endpoints gives nothing", svc: withSpec(collectortest.Service("c", cipT, map[string]string{collectortest.Alpha + "hostname": "c.example.org"}),
			func(s *corev1.ServiceSpec) { s.ClusterIP = corev1.ClusterIPNone })},
		{name: "headless with target annotation", svc: withSpec(collectortest.Service("c", cipT, map[string]string{collectortest.Alpha + "hostname": "c.example.org", collectortest.Alpha + "target": "192.0.2.9"}),
			func(s *corev1.ServiceSpec) { s.ClusterIP = corev1.ClusterIPNone }), want: eps(collectortest.EP("c.example.org", "A", "192.0.2.9"))},
		{name: "nodeport without nodes gives nothing", svc: collectortest.Service("c", npT, map[string]string{collectortest.Alpha + "hostname": "c.example.org"})},
	})
}

// Targets of ExternalName Services.
func TestRuleExternalNameTargets(t *testing.T) {
	h := map[string]string{collectortest.Alpha + "hostname": "x.example.org"}
	runRules(t, []ruleCase{
		{name: "externalName is CNAME", svc: withSpec(collectortest.Service("x", extT, h), func(s *corev1.ServiceSpec) { s.ExternalName = "backend.example.net" }),
			want: eps(collectortest.EP("x.example.org", "CNAME", "backend.example.net"))},
		{name: "externalIPs win", svc: withSpec(collectortest.Service("x", extT, h), func(s *corev1.ServiceSpec) {
			s.ExternalName = "backend.example.net"
			s.ExternalIPs = []string{"198.51.100.1", "2001:db8::5"}
		}), want: eps(collectortest.EP("x.example.org", "A", "198.51.100.1"), collectortest.EP("x.example.org", "AAAA", "2001:db8::5"))},
	})
}

// The target, ttl and controller annotations.
func TestRuleTargetTTLControllerAnnotations(t *testing.T) {
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}
	runRules(t, []ruleCase{
		{name: "target overrides status", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "target": "203.0.113.1,203.0.113.2"}),
			lb: lb, want: eps(collectortest.EP("t.example.org", "A", "203.0.113.1", "203.0.113.2"))},
		{name: "target hostname is CNAME", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Stable + "target": "edge.example.net."}),
			lb: lb, want: eps(collectortest.EP("t.example.org", "CNAME", "edge.example.net"))},
		{name: "target overrides internal-hostname", svc: collectortest.Service("t", cipT, map[string]string{collectortest.Alpha + "internal-hostname": "t.example.org", collectortest.Alpha + "target": "2001:db8::7"}),
			want: eps(collectortest.EP("t.example.org", "AAAA", "2001:db8::7"))},
		{name: "invalid target skipped, valid kept", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "target": "203.0.113.1,not a target!"}),
			lb: lb, want: eps(collectortest.EP("t.example.org", "A", "203.0.113.1"))},
		{name: "ttl seconds", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "ttl": "300"}),
			lb: lb, want: eps(events.NewEndpoint("t.example.org", "A", 300, "192.0.2.1"))},
		{name: "ttl duration stable prefix", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Stable + "ttl": "2m"}),
			lb: lb, want: eps(events.NewEndpoint("t.example.org", "A", 120, "192.0.2.1"))},
		{name: "invalid ttl: published without ttl", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "ttl": "abc"}),
			lb: lb, want: eps(collectortest.EP("t.example.org", "A", "192.0.2.1"))},
		{name: "controller dns-controller", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "controller": "dns-controller"}),
			lb: lb, want: eps(collectortest.EP("t.example.org", "A", "192.0.2.1"))},
		{name: "controller other is skipped", svc: collectortest.Service("t", lbT, map[string]string{collectortest.Alpha + "hostname": "t.example.org", collectortest.Alpha + "controller": "someone-else"}),
			lb: lb},
	})
}

// --service-type-filter, --label-filter, --annotation-filter.
func TestRuleFilters(t *testing.T) {
	h := map[string]string{collectortest.Alpha + "internal-hostname": "f.example.org"}
	h2 := map[string]string{collectortest.Alpha + "internal-hostname": "f.example.org", "team": "dns"}
	onlyLB := func(c *collector.Config) { c.Service.ServiceTypeFilter = []string{"LoadBalancer"} }
	runRules(t, []ruleCase{
		{name: "type filter drops ClusterIP", cfg: onlyLB, svc: collectortest.Service("f", cipT, h),
			barrier: func(s *corev1.Service) { s.Spec.Type = lbT }},
		{name: "type filter keeps LoadBalancer", cfg: onlyLB, svc: collectortest.Service("f", lbT, h), want: clusterIPEp("f.example.org")},
		{name: "type filter repeated", cfg: func(c *collector.Config) { c.Service.ServiceTypeFilter = []string{"LoadBalancer", "ClusterIP"} },
			svc: collectortest.Service("f", cipT, h), want: clusterIPEp("f.example.org")},
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			svc: withLabels(collectortest.Service("f", cipT, h), map[string]string{"dns": "yes"}), want: clusterIPEp("f.example.org")},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			svc:     withLabels(collectortest.Service("f", cipT, h), map[string]string{"dns": "no"}),
			barrier: func(s *corev1.Service) { s.Labels = map[string]string{"dns": "yes"} }},
		{name: "annotation filter on a foreign annotation matches", cfg: func(c *collector.Config) { c.AnnotationFilter = "team in (dns,net)" },
			svc: collectortest.Service("f", cipT, h2), want: clusterIPEp("f.example.org")},
		{name: "annotation filter does not match", cfg: func(c *collector.Config) { c.AnnotationFilter = "team=web" },
			svc: collectortest.Service("f", cipT, h2), barrier: func(s *corev1.Service) { s.Annotations["team"] = "web" }},
	})
}
