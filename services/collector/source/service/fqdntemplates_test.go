package service_test

import (
	"flag"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --fqdn-template repeated, as ExternalDNS v0.22 takes it: every template's
// names, a comma inside one template (here in a printf literal) left alone.
func TestRuleFQDNTemplateRepeated(t *testing.T) {
	templates := func(c *collector.Config) {
		var parsed collector.Config
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		parsed.RegisterFlags(fs)
		if err := fs.Parse([]string{"--fqdn-template={{.Name}}.a.example.org",
			`--fqdn-template={{printf "%s.b.example.org,%s.c.example.org" .Name .Name}}`}); err != nil {
			t.Fatal(err)
		}
		c.FQDNTemplate = parsed.FQDNTemplate
	}
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}
	runRules(t, []ruleCase{
		{name: "two templates", cfg: templates, svc: collectortest.Service("web", lbT, nil), lb: lb,
			want: eps(collectortest.EP("web.a.example.org", "A", "192.0.2.1"), collectortest.EP("web.b.example.org", "A", "192.0.2.1"),
				collectortest.EP("web.c.example.org", "A", "192.0.2.1"))},
	})
}
