package collector_test

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
)

// ing builds an Ingress with a default backend (so that it is valid with
// or without rules), a rule per host and one TLS block of tlsHosts.
func ing(name string, annotations map[string]string, hosts []string, tlsHosts ...string) *networkingv1.Ingress {
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
	for _, h := range hosts {
		in.Spec.Rules = append(in.Spec.Rules, networkingv1.IngressRule{Host: h})
	}
	if len(tlsHosts) > 0 {
		in.Spec.TLS = []networkingv1.IngressTLS{{Hosts: tlsHosts, SecretName: "cert"}}
	}
	return in
}

func withClass(in *networkingv1.Ingress, class string) *networkingv1.Ingress {
	in.Spec.IngressClassName = &class
	return in
}

func ingLB(addrs ...string) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, a := range addrs {
		if strings.ContainsAny(a, ":") || strings.Trim(a, "0123456789.") == "" {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			out = append(out, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return out
}

func createIngress(t *testing.T, ns string, in *networkingv1.Ingress, lb []networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
	t.Helper()
	in = in.DeepCopy()
	in.Namespace = ns
	got, err := cluster.Client.NetworkingV1().Ingresses(ns).Create(t.Context(), in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb) > 0 {
		got.Status.LoadBalancer.Ingress = lb
		if got, err = cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return got
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
			ns := newNamespace(t)
			cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			startCollector(t, cfg)
			createIngress(t, ns, tc.ing, tc.lb)
			subj := ingressSubject(ns, ns, tc.ing.Name)
			if tc.want == nil {
				b := ing("zz-barrier", nil, []string{"barrier." + ns + ".test"})
				if tc.barrier != nil {
					tc.barrier(b)
				}
				createIngress(t, ns, b, ingLB("192.0.2.254"))
				waitState(t, ingressSubject(ns, ns, b.Name), []events.Endpoint{ep("barrier."+ns+".test", "A", "192.0.2.254")})
				if s, ok := lastState(t, subj); ok {
					t.Fatalf("published %v, want nothing", render(s.Endpoints))
				}
				return
			}
			s := waitState(t, subj, tc.want)
			wantRef := events.ObjectRef{Cluster: ns, Source: "ingress", Namespace: ns, Name: tc.ing.Name}
			if s.Object != wantRef {
				t.Fatalf("object %+v, want %+v", s.Object, wantRef)
			}
			if tc.ing.Annotations[alpha+"set-identifier"] != "" {
				for _, e := range s.Endpoints {
					if e.SetIdentifier != tc.ing.Annotations[alpha+"set-identifier"] {
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
	lb := ingLB("192.0.2.1")
	runIngressRules(t, []ingressCase{
		{name: "rules hosts", ing: ing("i", nil, []string{h1, h2, ""}), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep(h2, "A", "192.0.2.1")}},
		{name: "tls hosts, shared with rules", ing: ing("i", nil, []string{h1}, h1, "*.c.example.org"), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep("*.c.example.org", "A", "192.0.2.1")}},
		{name: "wildcard rule host", ing: ing("i", nil, []string{"*.apps.example.org"}), lb: lb,
			want: []events.Endpoint{ep("*.apps.example.org", "A", "192.0.2.1")}},
		{name: "hostname annotation adds names", ing: ing("i", ann("hostname", "x.example.org., y.example.org"), []string{h1}), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep("x.example.org", "A", "192.0.2.1"), ep("y.example.org", "A", "192.0.2.1")}},
		{name: "hostname annotation stable prefix, no rules", ing: ing("i", map[string]string{stable + "hostname": h2}, nil), lb: lb,
			want: []events.Endpoint{ep(h2, "A", "192.0.2.1")}},
		{name: "invalid hostname annotation entry skipped", ing: ing("i", ann("hostname", "ok.example.org,bad..example.org"), nil), lb: lb,
			want: []events.Endpoint{ep("ok.example.org", "A", "192.0.2.1")}},
		{name: "no host at all", ing: ing("i", nil, nil), lb: lb},
		{name: "--ignore-hostname-annotation", cfg: func(c *collector.Config) { c.IgnoreHostnameAnnotation = true },
			ing: ing("i", ann("hostname", "x.example.org"), []string{h1}), lb: lb, want: []events.Endpoint{ep(h1, "A", "192.0.2.1")}},
		{name: "--ignore-ingress-tls-spec", cfg: func(c *collector.Config) { c.Ingress.IgnoreTLSSpec = true },
			ing: ing("i", nil, []string{h1}, h2), lb: lb, want: []events.Endpoint{ep(h1, "A", "192.0.2.1")}},
		{name: "--ignore-ingress-rules-spec", cfg: func(c *collector.Config) { c.Ingress.IgnoreRulesSpec = true },
			ing: ing("i", ann("hostname", "x.example.org"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{ep(h2, "A", "192.0.2.1"), ep("x.example.org", "A", "192.0.2.1")}},
	})
}

// The ingress-hostname-source annotation.
func TestIngressRuleHostnameSource(t *testing.T) {
	lb := ingLB("192.0.2.1")
	withSource := func(v string) map[string]string {
		return ann("hostname", "x.example.org", "ingress-hostname-source", v)
	}
	runIngressRules(t, []ingressCase{
		{name: "defined-hosts-only", ing: ing("i", withSource("defined-hosts-only"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep(h2, "A", "192.0.2.1")}},
		{name: "annotation-only", ing: ing("i", withSource("annotation-only"), []string{h1}, h2), lb: lb,
			want: []events.Endpoint{ep("x.example.org", "A", "192.0.2.1")}},
		{name: "case-insensitive", ing: ing("i", withSource("Annotation-Only"), []string{h1}), lb: lb,
			want: []events.Endpoint{ep("x.example.org", "A", "192.0.2.1")}},
		{name: "unknown value: no name", ing: ing("i", withSource("both"), []string{h1}), lb: lb},
		{name: "unknown value: template still applies", cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.tmpl.org" },
			ing: ing("i", withSource("both"), []string{h1}), lb: lb, want: []events.Endpoint{ep("i.tmpl.org", "A", "192.0.2.1")}},
	})
}

// Targets: the load balancer status, or the target annotation.
func TestIngressRuleTargets(t *testing.T) {
	h := []string{h1}
	runIngressRules(t, []ingressCase{
		{name: "status ips", ing: ing("i", nil, h), lb: ingLB("192.0.2.1", "192.0.2.2"),
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1", "192.0.2.2")}},
		{name: "status hostname is CNAME", ing: ing("i", nil, h), lb: ingLB("lb.cloud.example.net"),
			want: []events.Endpoint{ep(h1, "CNAME", "lb.cloud.example.net")}},
		{name: "status ip and hostname", ing: ing("i", nil, h),
			lb:   []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1", Hostname: "lb.cloud.example.net"}},
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep(h1, "CNAME", "lb.cloud.example.net")}},
		{name: "ipv6 is AAAA", ing: ing("i", nil, h), lb: ingLB("2001:db8::1", "192.0.2.1"),
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep(h1, "AAAA", "2001:db8::1")}},
		{name: "target annotation overrides status", ing: ing("i", ann("target", "203.0.113.1,edge.example.net."), h), lb: ingLB("192.0.2.1"),
			want: []events.Endpoint{ep(h1, "A", "203.0.113.1"), ep(h1, "CNAME", "edge.example.net")}},
		{name: "target annotation without status", ing: ing("i", map[string]string{stable + "target": "203.0.113.1"}, h),
			want: []events.Endpoint{ep(h1, "A", "203.0.113.1")}},
		{name: "invalid target skipped, valid kept", ing: ing("i", ann("target", "203.0.113.1,300.1.1.1"), h), lb: ingLB("192.0.2.1"),
			want: []events.Endpoint{ep(h1, "A", "203.0.113.1")}},
		{name: "only invalid targets: status used", ing: ing("i", ann("target", "not a target!"), h), lb: ingLB("192.0.2.1"),
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1")}},
		{name: "no status yet", ing: ing("i", nil, h)},
	})
}

// ttl, set-identifier, controller; --fqdn-template and --combine-fqdn-annotation.
func TestIngressRuleAnnotationsAndTemplate(t *testing.T) {
	lb := ingLB("192.0.2.1")
	tmpl := func(c *collector.Config) {
		c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.tmpl.org, {{ toLower .Kind }}.tmpl.org"
	}
	runIngressRules(t, []ingressCase{
		{name: "ttl", ing: ing("i", ann("ttl", "5m"), []string{h1}), lb: lb,
			want: []events.Endpoint{events.NewEndpoint(h1, "A", 300, "192.0.2.1")}},
		{name: "invalid ttl: no ttl", ing: ing("i", ann("ttl", "-1"), []string{h1}), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1")}},
		{name: "set-identifier", ing: ing("i", ann("set-identifier", "eu"), []string{h1}), lb: lb,
			want: []events.Endpoint{withSetID(ep(h1, "A", "192.0.2.1"), "eu")}},
		{name: "controller dns-controller", ing: ing("i", ann("controller", "dns-controller"), []string{h1}), lb: lb,
			want: []events.Endpoint{ep(h1, "A", "192.0.2.1")}},
		{name: "controller other", ing: ing("i", ann("controller", "other"), []string{h1}), lb: lb},
	})
	// The template cases need the namespace in their names.
	for _, tc := range []struct {
		name    string
		combine bool
		hosts   []string
		want    func(ns string) []events.Endpoint
	}{
		{"template when no host", false, nil, func(ns string) []events.Endpoint {
			return []events.Endpoint{ep("i."+ns+".tmpl.org", "A", "192.0.2.1"), ep("ingress.tmpl.org", "A", "192.0.2.1")}
		}},
		{"template not used when hosts", false, []string{h1}, func(string) []events.Endpoint {
			return []events.Endpoint{ep(h1, "A", "192.0.2.1")}
		}},
		{"combine-fqdn-annotation", true, []string{h1}, func(ns string) []events.Endpoint {
			return []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep("i."+ns+".tmpl.org", "A", "192.0.2.1"), ep("ingress.tmpl.org", "A", "192.0.2.1")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			cfg := collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}, CombineFQDNAnnotation: tc.combine}
			tmpl(&cfg)
			startCollector(t, cfg)
			createIngress(t, ns, ing("i", nil, tc.hosts), lb)
			waitState(t, ingressSubject(ns, ns, "i"), tc.want(ns))
		})
	}
}

func withSetID(e events.Endpoint, id string) events.Endpoint {
	e.SetIdentifier = id
	return e
}

// --ingress-class, --label-filter, --annotation-filter.
func TestIngressRuleFilters(t *testing.T) {
	lb := ingLB("192.0.2.1")
	h := []string{h1}
	want := []events.Endpoint{ep(h1, "A", "192.0.2.1")}
	classes := func(c *collector.Config) { c.Ingress.IngressClasses = []string{"nginx", "internal"} }
	runIngressRules(t, []ingressCase{
		{name: "ingressClassName matches", cfg: classes, ing: withClass(ing("i", nil, h), "internal"), lb: lb, want: want},
		{name: "ingressClassName does not match", cfg: classes, ing: withClass(ing("i", nil, h), "traefik"), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "legacy class annotation matches", cfg: classes,
			ing: ing("i", map[string]string{"kubernetes.io/ingress.class": "nginx"}, h), lb: lb, want: want},
		{name: "legacy class annotation does not match", cfg: classes,
			ing: ing("i", map[string]string{"kubernetes.io/ingress.class": "traefik"}, h), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "no class at all is dropped", cfg: classes, ing: ing("i", nil, h), lb: lb,
			barrier: func(b *networkingv1.Ingress) { withClass(b, "nginx") }},
		{name: "no --ingress-class: every class", ing: withClass(ing("i", nil, h), "traefik"), lb: lb, want: want},
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			ing: withIngLabels(ing("i", nil, h), map[string]string{"dns": "yes"}), lb: lb, want: want},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "dns=yes" },
			ing: ing("i", nil, h), lb: lb, barrier: func(b *networkingv1.Ingress) { withIngLabels(b, map[string]string{"dns": "yes"}) }},
		{name: "annotation filter on the class annotation", cfg: func(c *collector.Config) { c.AnnotationFilter = "kubernetes.io/ingress.class=nginx" },
			ing: ing("i", map[string]string{"kubernetes.io/ingress.class": "nginx"}, h), lb: lb, want: want},
	})
}

func withIngLabels(in *networkingv1.Ingress, l map[string]string) *networkingv1.Ingress {
	in.Labels = l
	return in
}

// Updates, deletion and bad input of an Ingress.
func TestIngressLifecycle(t *testing.T) {
	ns := newNamespace(t)
	startCollector(t, collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"ingress"}})
	before := testutil.ToFloat64(collector.InvalidInputMetricOf("ingress", "InvalidAnnotation"))
	in := createIngress(t, ns, ing("web", ann("ttl", "abc", "hostname", "ok.example.org,-bad-.example.org"), []string{h1}), ingLB("192.0.2.1"))
	subj := ingressSubject(ns, ns, "web")
	waitState(t, subj, []events.Endpoint{ep(h1, "A", "192.0.2.1"), ep("ok.example.org", "A", "192.0.2.1")})
	msgs := waitObjectEvents(t, ns, "Ingress", "web", 2)
	for _, want := range []string{"ttl", "hostname"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no event about %s in:\n%s", want, msgs)
		}
	}
	if got := testutil.ToFloat64(collector.InvalidInputMetricOf("ingress", "InvalidAnnotation")); got < before+2 {
		t.Errorf("invalid_input_total{ingress,InvalidAnnotation} went %v -> %v, want +2", before, got)
	}

	// The status changes: republished.
	in.Status.LoadBalancer.Ingress = ingLB("192.0.2.9")
	if _, err := cluster.Client.NetworkingV1().Ingresses(ns).UpdateStatus(t.Context(), in, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, subj, []events.Endpoint{ep(h1, "A", "192.0.2.9"), ep("ok.example.org", "A", "192.0.2.9")})

	// Deleted: a tombstone.
	if err := cluster.Client.NetworkingV1().Ingresses(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, subj, nil)
	if s, _ := lastState(t, subj); !s.IsTombstone() {
		t.Fatal("no tombstone")
	}
}
