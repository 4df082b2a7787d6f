package ingress_test

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

func withClass(in *networkingv1.Ingress, class string) *networkingv1.Ingress {
	in.Spec.IngressClassName = &class
	return in
}

func ingressSubject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, "ingress", ns, name)
}

type ingressCase struct {
	name string
	cfg  func(*collector.Config)
	ing  *networkingv1.Ingress
	lb   []networkingv1.IngressLoadBalancerIngress
	// want: nil means nothing is published.
	want []events.Endpoint
	// barrier adapts the barrier Ingress to the case's filters.
	barrier func(*networkingv1.Ingress)
}

// runIngressRules runs every case against the real apiserver with a
// collector of its own (source ingress, namespace and cluster per case).
func runIngressRules(t *testing.T, cases []ingressCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			collectortest.StartCollector(t, cfg)
			collectortest.CreateIngress(t, ns, tc.ing, tc.lb)
			subj := ingressSubject(ns, ns, tc.ing.Name)
			if tc.want == nil {
				b := collectortest.Ingress("zz-barrier", nil, []string{"barrier." + ns + ".test"})
				if tc.barrier != nil {
					tc.barrier(b)
				}
				collectortest.CreateIngress(t, ns, b, collectortest.IngressLB("192.0.2.254"))
				collectortest.WaitState(t, ingressSubject(ns, ns, b.Name), []events.Endpoint{collectortest.EP("barrier."+ns+".test", "A", "192.0.2.254")})
				if s, ok := collectortest.LastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", collectortest.Render(s.Endpoints))
				}
				return
			}
			s := collectortest.WaitState(t, subj, tc.want)
			wantRef := events.ObjectRef{Cluster: ns, Source: "ingress", Namespace: ns, Name: tc.ing.Name}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
			if tc.ing.Annotations[collectortest.Alpha+"set-identifier"] != "" {
				for _, e := range s.Endpoints {
					if e.SetIdentifier != tc.ing.Annotations[collectortest.Alpha+"set-identifier"] {
						t.Fatalf("endpoint %+v: set identifier %q", e, e.SetIdentifier)
					}
				}
			}
		})
	}
}

const (
	h1 = "a.example.org"
	h2 = "b.example.org"
)

// Domain names: spec.rules hosts, spec.tls hosts, the hostname annotation.
func TestIngressRuleHosts(t *testing.T) {
	lb := collectortest.IngressLB("192.0.2.1")
	runIngressRules(t, []ingressCase{
		{name: "rules hosts", ing: collectortest.Ingress("i", nil, []string{h1, h2, ""}), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP(h2, "A", "192.0.2.1")}},
		{name: "tls hosts, shared with rules", ing: collectortest.Ingress("i", nil, []string{h1}, h1, "*.c.example.org"), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP("*.c.example.org", "A", "192.0.2.1")}},
		{name: "wildcard rule host", ing: collectortest.Ingress("i", nil, []string{"*.apps.example.org"}), lb: lb,
			want: []events.Endpoint{collectortest.EP("*.apps.example.org", "A", "192.0.2.1")}},
		{name: "hostname annotation adds names", ing: collectortest.Ingress("i", collectortest.Ann("hostname", "x.example.org., y.example.org"), []string{h1}), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP("x.example.org", "A", "192.0.2.1"), collectortest.EP("y.example.org", "A", "192.0.2.1")}},
		{name: "hostname annotation stable prefix, no rules", ing: collectortest.Ingress("i", map[string]string{collectortest.Stable + "hostname": h2}, nil), lb: lb,
			want: []events.Endpoint{collectortest.EP(h2, "A", "192.0.2.1")}},
		{name: "invalid hostname annotation entry skipped", ing: collectortest.Ingress("i", collectortest.Ann("hostname", "ok.example.org,bad..example.org"), nil), lb: lb,
			want: []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")}},
		{name: "no host at all", ing: collectortest.Ingress("i", nil, nil), lb: lb},
		{name: "--ignore-hostname-annotation", cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			ing: collectortest.Ingress("i", collectortest.Ann("hostname", "x.example.org"), []string{h1}), lb: lb, want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}},
		{name: "--ignore-ingress-tls-spec", cfg: func(c *collector.Config) { c.Ingress.IgnoreTLSSpec = true },
			ing: collectortest.Ingress("i", nil, []string{h1}, h2), lb: lb, want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}},
		{name: "--ignore-ingress-rules-spec", cfg: func(c *collector.Config) { c.Ingress.IgnoreRulesSpec = true },
			ing: collectortest.Ingress("i", collectortest.Ann("hostname", "x.example.org"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{collectortest.EP(h2, "A", "192.0.2.1"), collectortest.EP("x.example.org", "A", "192.0.2.1")}},
	})
}

// The ingress-hostname-source annotation.
func TestIngressRuleHostnameSource(t *testing.T) {
	lb := collectortest.IngressLB("192.0.2.1")
	withSource := func(v string) map[string]string {
		return collectortest.Ann("hostname", "x.example.org", "ingress-hostname-source", v)
	}
	runIngressRules(t, []ingressCase{
		{name: "defined-hosts-only", ing: collectortest.Ingress("i", withSource("defined-hosts-only"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP(h2, "A", "192.0.2.1")}},
		{name: "annotation-only", ing: collectortest.Ingress("i", withSource("annotation-only"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{collectortest.EP("x.example.org", "A", "192.0.2.1")}},
		{name: "case-insensitive", ing: collectortest.Ingress("i", withSource("Annotation-Only"), []string{h1}), lb: lb,
			want: []events.Endpoint{collectortest.EP("x.example.org", "A", "192.0.2.1")}},
		{name: "unknown value: no name", ing: collectortest.Ingress("i", withSource("both"), []string{h1}), lb: lb},
		{name: "unknown value: template still applies", cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.tmpl.org" },
			ing: collectortest.Ingress("i", withSource("both"), []string{h1}), lb: lb, want: []events.Endpoint{collectortest.EP("i.tmpl.org", "A", "192.0.2.1")}},
	})
}

// Targets: the load balancer status, or the target annotation.
func TestIngressRuleTargets(t *testing.T) {
	h := []string{h1}
	runIngressRules(t, []ingressCase{
		{name: "status ips", ing: collectortest.Ingress("i", nil, h), lb: collectortest.IngressLB("192.0.2.1", "192.0.2.2"),
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1", "192.0.2.2")}},
		{name: "status hostname is CNAME", ing: collectortest.Ingress("i", nil, h), lb: collectortest.IngressLB("lb.cloud.example.net"),
			want: []events.Endpoint{collectortest.EP(h1, "CNAME", "lb.cloud.example.net")}},
		{name: "status ip and hostname", ing: collectortest.Ingress("i", nil, h),
			lb:   []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1", Hostname: "lb.cloud.example.net"}},
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP(h1, "CNAME", "lb.cloud.example.net")}},
		{name: "ipv6 is AAAA", ing: collectortest.Ingress("i", nil, h), lb: collectortest.IngressLB("2001:db8::1", "192.0.2.1"),
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP(h1, "AAAA", "2001:db8::1")}},
		{name: "target annotation overrides status", ing: collectortest.Ingress("i", collectortest.Ann("target", "203.0.113.1,edge.example.net."), h), lb: collectortest.IngressLB("192.0.2.1"),
			want: []events.Endpoint{collectortest.EP(h1, "A", "203.0.113.1"), collectortest.EP(h1, "CNAME", "edge.example.net")}},
		{name: "target annotation without status", ing: collectortest.Ingress("i", map[string]string{collectortest.Stable + "target": "203.0.113.1"}, h),
			want: []events.Endpoint{collectortest.EP(h1, "A", "203.0.113.1")}},
		{name: "invalid target skipped, valid kept", ing: collectortest.Ingress("i", collectortest.Ann("target", "203.0.113.1,300.1.1.1"), h), lb: collectortest.IngressLB("192.0.2.1"),
			want: []events.Endpoint{collectortest.EP(h1, "A", "203.0.113.1")}},
		{name: "only invalid targets: status used", ing: collectortest.Ingress("i", collectortest.Ann("target", "not a target!"), h), lb: collectortest.IngressLB("192.0.2.1"),
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}},
		{name: "no status yet", ing: collectortest.Ingress("i", nil, h)},
	})
}

// ttl, set-identifier, controller; --fqdn-template and --combine-fqdn-annotation.
func TestIngressRuleAnnotationsAndTemplate(t *testing.T) {
	lb := collectortest.IngressLB("192.0.2.1")
	tmpl := func(c *collector.Config) {
		c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.tmpl.org, {{ toLower .Kind }}.tmpl.org"
	}
	runIngressRules(t, []ingressCase{
		{name: "ttl", ing: collectortest.Ingress("i", collectortest.Ann("ttl", "5m"), []string{h1}), lb: lb,
			want: []events.Endpoint{events.NewEndpoint(h1, "A", 300, "192.0.2.1")}},
		{name: "invalid ttl: no ttl", ing: collectortest.Ingress("i", collectortest.Ann("ttl", "-1"), []string{h1}), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}},
		{name: "set-identifier", ing: collectortest.Ingress("i", collectortest.Ann("set-identifier", "eu"), []string{h1}), lb: lb,
			want: []events.Endpoint{collectortest.WithSetID(collectortest.EP(h1, "A", "192.0.2.1"), "eu")}},
		{name: "controller dns-controller", ing: collectortest.Ingress("i", collectortest.Ann("controller", "dns-controller"), []string{h1}), lb: lb,
			want: []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}},
		{name: "controller other", ing: collectortest.Ingress("i", collectortest.Ann("controller", "other"), []string{h1}), lb: lb},
	})
	// The template cases need the namespace in their names.
	for _, tc := range []struct {
		name    string
		combine bool
		hosts   []string
		want    func(ns string) []events.Endpoint
	}{
		{"template when no host", false, nil, func(ns string) []events.Endpoint {
			return []events.Endpoint{collectortest.EP("i."+ns+".tmpl.org", "A", "192.0.2.1"), collectortest.EP("ingress.tmpl.org", "A", "192.0.2.1")}
		}},
		{"template not used when hosts", false, []string{h1}, func(string) []events.Endpoint {
			return []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}
		}},
		{"combine-fqdn-annotation", true, []string{h1}, func(ns string) []events.Endpoint {
			return []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP("i."+ns+".tmpl.org", "A", "192.0.2.1"), collectortest.EP("ingress.tmpl.org", "A", "192.0.2.1")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}, CombineFQDNAnnotation: tc.combine}
			tmpl(&cfg)
			collectortest.StartCollector(t, cfg)
			collectortest.CreateIngress(t, ns, collectortest.Ingress("i", nil, tc.hosts), lb)
			collectortest.WaitState(t, ingressSubject(ns, ns, "i"), tc.want(ns))
		})
	}
}

// --ingress-class, --label-filter, --annotation-filter.
func TestIngressRuleFilters(t *testing.T) {
	lb := collectortest.IngressLB("192.0.2.1")
	h := []string{h1}
	want := []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1")}
	classes := func(c *collector.Config) { c.Ingress.IngressClasses = []string{"nginx", "internal"} }
	runIngressRules(t, []ingressCase{
		{name: "ingressClassName matches", cfg: classes, ing: withClass(collectortest.Ingress("i", nil, h), "internal"), lb: lb, want: want},
		{name: "ingressClassName does not match", cfg: classes, ing: withClass(collectortest.Ingress("i", nil, h), "traefik"), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "legacy class annotation matches", cfg: classes,
			ing: collectortest.Ingress("i", map[string]string{"kubernetes.io/ingress.class": "nginx"}, h), lb: lb, want: want},
		{name: "legacy class annotation does not match", cfg: classes,
			ing: collectortest.Ingress("i", map[string]string{"kubernetes.io/ingress.class": "traefik"}, h), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "no class at all is dropped", cfg: classes, ing: collectortest.Ingress("i", nil, h), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "no --ingress-class: every class", ing: withClass(collectortest.Ingress("i", nil, h), "traefik"), lb: lb, want: want},
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			ing: withIngLabels(collectortest.Ingress("i", nil, h), map[string]string{"dns": "yes"}), lb: lb, want: want},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			ing: collectortest.Ingress("i", nil, h), lb: lb, barrier: func(b *networkingv1.Ingress) { withIngLabels(b, map[string]string{"dns": "yes"}) }},
		{name: "annotation filter on the class annotation", cfg: func(c *collector.Config) { c.AnnotationFilter = "kubernetes.io/ingress.class=nginx" },
			ing: collectortest.Ingress("i", map[string]string{"kubernetes.io/ingress.class": "nginx"}, h), lb: lb, want: want},
	})
}

func withIngLabels(in *networkingv1.Ingress, l map[string]string) *networkingv1.Ingress {
	in.Labels = l
	return in
}

// Updates, deletion and bad input of an Ingress.
func TestIngressLifecycle(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}})
	before := collectortest.InvalidInput(t, "ingress", "InvalidAnnotation")
	in := collectortest.CreateIngress(t, ns, collectortest.Ingress("web", collectortest.Ann("ttl", "abc", "hostname", "ok.example.org,-bad-.example.org"), []string{h1}), collectortest.IngressLB("192.0.2.1"))
	subj := ingressSubject(ns, ns, "web")
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.1"), collectortest.EP("ok.example.org", "A", "192.0.2.1")})
	msgs := collectortest.WaitObjectEvents(t, ns, "Ingress", "web", 2)
	for _, want := range []string{"ttl", "hostname"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event about %s in:\n%s", want, msgs)
		}
	}
	if got := collectortest.InvalidInput(t, "ingress", "InvalidAnnotation"); got < before+2 {
		t.Errorf("invalid_input_total{ingress,InvalidAnnotation} went %v -> %v, want +2", before, got)
	}

	// The status changes: republished.
	in.Status.LoadBalancer.Ingress = collectortest.IngressLB("192.0.2.9")
	if _, err := collectortest.Cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), in, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, []events.Endpoint{collectortest.EP(h1, "A", "192.0.2.9"), collectortest.EP("ok.example.org", "A", "192.0.2.9")})

	// Deleted: a tombstone.
	if err := collectortest.Cluster.Client.NetworkingV1().Ingresses(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, subj, nil)
	if s, _ := collectortest.LastState(t, subj); !s.IsTombstone() {
		t.Fatal("no tombstone")
	}
}
