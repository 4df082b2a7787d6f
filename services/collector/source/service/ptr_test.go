package service_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A Service's record-type annotation (ExternalDNS v0.22) asks for the PTR
// record of its address, with PTR managed; --create-ptr asks for it for
// every Service, the annotation set empty opting out.
func TestRulePTR(t *testing.T) {
	lb := []corev1.LoadBalancerIngress{collectortest.LoadBalancerIP("192.0.2.7")}
	ann := func(recordType ...string) map[string]string {
		a := map[string]string{collectortest.Alpha + "hostname": "web.example.org"}
		for _, v := range recordType {
			a[collectortest.Stable+"record-type"] = v
		}
		return a
	}
	ptrManaged := func(create bool) func(*collector.Config) {
		return func(c *collector.Config) {
			c.ManagedRecordTypes, c.CreatePTR = []string{"A", "AAAA", "CNAME", "PTR"}, create
		}
	}
	a := collectortest.EP("web.example.org", "A", "192.0.2.7")
	ptr := collectortest.EP("7.2.0.192.in-addr.arpa", "PTR", "web.example.org")
	runRules(t, []ruleCase{
		{name: "record-type ptr", cfg: ptrManaged(false), svc: collectortest.Service("web", lbT, ann("ptr")), lb: lb, want: eps(a, ptr)},
		{name: "record-type ptr, PTR not managed", svc: collectortest.Service("web", lbT, ann("ptr")), lb: lb, want: eps(a)},
		{name: "--create-ptr", cfg: ptrManaged(true), svc: collectortest.Service("web", lbT, ann()), lb: lb, want: eps(a, ptr)},
		{name: "--create-ptr, record-type empty", cfg: ptrManaged(true), svc: collectortest.Service("web", lbT, ann("")), lb: lb, want: eps(a)},
	})
}
