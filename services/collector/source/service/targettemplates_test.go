package service_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --fqdn-target-template: name:target pairs from the Service, before the
// --fqdn-template names and only while the Service has no record of its
// own, unless --combine-fqdn-annotation (ExternalDNS v0.23's
// service_fqdn_test.go cases).
func TestRuleFQDNTargetTemplate(t *testing.T) {
	pairs := func(tmpl string, combine bool) func(*collector.Config) {
		return func(c *collector.Config) { c.FQDNTargetTemplate, c.CombineFQDNAnnotation = tmpl, combine }
	}
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}
	annotated := map[string]string{collectortest.Alpha + "hostname": "annotated.example.com"}
	runRules(t, []ruleCase{
		{name: "A record when the Service names nothing", cfg: pairs("{{.Name}}.example.com:1.2.3.4", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.example.com", "A", "1.2.3.4"))},
		{name: "CNAME for a hostname target", cfg: pairs("{{.Name}}.example.com:lb.example.com", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.example.com", "CNAME", "lb.example.com"))},
		{name: "AAAA for an IPv6 target", cfg: pairs("{{.Name}}.example.com:2001:db8::1", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.example.com", "AAAA", "2001:db8::1"))},
		{name: "with combine, beside the annotated name", cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", true),
			svc: collectortest.Service("web", lbT, annotated), lb: lb,
			want: eps(collectortest.EP("annotated.example.com", "A", "192.0.2.1"), collectortest.EP("web.tmpl.example.com", "CNAME", "lb.example.com"))},
		{name: "without combine, ignored when the Service is annotated", cfg: pairs("{{.Name}}.tmpl.example.com:lb.example.com", false),
			svc: collectortest.Service("web", lbT, annotated), lb: lb, want: eps(collectortest.EP("annotated.example.com", "A", "192.0.2.1"))},
		{name: ".Kind", cfg: pairs("{{.Kind | toLower}}.{{.Name}}.example.com:1.2.3.4", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("service.web.example.com", "A", "1.2.3.4"))},
		{name: ".APIVersion", cfg: pairs("{{.Name}}.{{.APIVersion}}.example.com:1.2.3.4", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.v1.example.com", "A", "1.2.3.4"))},
		{name: "a pair without ':' is skipped", cfg: pairs("{{.Name}}.example.com", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb},
		{name: "a pair with an empty target is skipped, the others kept",
			cfg: pairs("{{.Name}}.example.com:{{range .Status.LoadBalancer.Ingress}}{{.Hostname}}{{end}},{{.Name}}.ip.example.com:{{range .Status.LoadBalancer.Ingress}}{{.IP}}{{end}}", false),
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.ip.example.com", "A", "192.0.2.1"))},
		{name: "pairs win over --fqdn-template without combine",
			cfg: func(c *collector.Config) {
				pairs("{{.Name}}.pair.example.com:1.2.3.4", false)(c)
				c.FQDNTemplate = "{{.Name}}.tmpl.example.com"
			},
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.pair.example.com", "A", "1.2.3.4"))},
		{name: "--fqdn-template alone: its names at the Service's targets",
			cfg: func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.tmpl.example.com" },
			svc: collectortest.Service("web", lbT, nil), lb: lb, want: eps(collectortest.EP("web.tmpl.example.com", "A", "192.0.2.1"))},
		{name: "both with combine", cfg: func(c *collector.Config) {
			pairs("{{.Name}}.pair.example.com:1.2.3.4", true)(c)
			c.FQDNTemplate = "{{.Name}}.tmpl.example.com"
		}, svc: collectortest.Service("web", lbT, nil), lb: lb,
			want: eps(collectortest.EP("web.pair.example.com", "A", "1.2.3.4"), collectortest.EP("web.tmpl.example.com", "A", "192.0.2.1"))},
	})
}
