package service_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// Through a real collector: without --annotation-prefix both of
// ExternalDNS' prefixes are read, the alpha one winning; with it, exactly
// the prefix given (the informers keep its annotations, the others are
// not read), as ExternalDNS v0.22's split-horizon set-up uses it.
func TestRuleAnnotationPrefix(t *testing.T) {
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.1")}
	both := map[string]string{
		collectortest.Alpha + "hostname": "alpha.example.org", collectortest.Stable + "hostname": "ga.example.org",
		"internal.example.com/hostname": "internal.example.org", "internal.example.com/ttl": "60",
	}
	prefix := func(p string) func(*collector.Config) { return func(c *collector.Config) { c.AnnotationPrefix = p } }
	runRules(t, []ruleCase{
		{name: "default: both, alpha wins", svc: collectortest.Service("web", lbT, both), lb: lb,
			want: eps(collectortest.EP("alpha.example.org", "A", "192.0.2.1"))},
		{name: "the GA prefix only", cfg: prefix(collectortest.Stable), svc: collectortest.Service("web", lbT, both), lb: lb,
			want: eps(collectortest.EP("ga.example.org", "A", "192.0.2.1"))},
		{name: "a prefix of one's own", cfg: prefix("internal.example.com/"), svc: collectortest.Service("web", lbT, both), lb: lb,
			want: eps(events.NewEndpoint("internal.example.org", "A", 60, "192.0.2.1"))},
	})
}
