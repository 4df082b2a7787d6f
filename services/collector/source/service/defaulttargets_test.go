package service_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --default-targets leave a Service's own targets alone; with
// --force-default-targets (ExternalDNS' legacy behaviour) they replace
// them, on every source.
func TestRuleDefaultTargets(t *testing.T) {
	h := map[string]string{collectortest.Alpha + "hostname": "lb.example.org"}
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}
	defaults := func(force bool) func(*collector.Config) {
		return func(c *collector.Config) {
			c.DefaultTargets, c.ForceDefaultTargets = []string{"198.51.100.9", "edge.example.net"}, force
		}
	}
	runRules(t, []ruleCase{
		{name: "not forced: the Service's own", cfg: defaults(false), svc: collectortest.Service("lb", lbT, h), lb: lb,
			want: eps(collectortest.EP("lb.example.org", "A", "192.0.2.1"))},
		{name: "forced: the defaults", cfg: defaults(true), svc: collectortest.Service("lb", lbT, h), lb: lb,
			want: eps(collectortest.EP("lb.example.org", "A", "198.51.100.9"), collectortest.EP("lb.example.org", "CNAME", "edge.example.net"))},
	})
}
