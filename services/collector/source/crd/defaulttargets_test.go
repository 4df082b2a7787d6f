package crd_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --default-targets and --force-default-targets, as ExternalDNS'
// multi-source: an entry without targets takes the defaults, each under
// the type it asks for (whatever the entry's type); forced, every entry
// does, and entries made the same are published once.
func TestCRDRuleDefaultTargets(t *testing.T) {
	defaults := func(force bool, targets ...string) func(*collector.Config) {
		return func(c *collector.Config) { c.DefaultTargets, c.ForceDefaultTargets = targets, force }
	}
	withTTLAndSet := func(e map[string]any) map[string]any {
		e["recordTTL"], e["setIdentifier"] = int64(60), "eu"
		return e
	}
	ttlAndSet := func(ep events.Endpoint) events.Endpoint {
		ep.RecordTTL, ep.SetIdentifier = 60, "eu"
		return ep
	}
	runCRDRules(t, []crdCase{
		{name: "an entry without targets takes them, typed by target",
			cfg:     defaults(false, "192.0.2.9", "2001:db8::9", "LB.example.net."),
			entries: []map[string]any{withTTLAndSet(collectortest.Entry("nt.example.org", "CNAME"))},
			want: []events.Endpoint{ttlAndSet(collectortest.EP("nt.example.org", "A", "192.0.2.9")),
				ttlAndSet(collectortest.EP("nt.example.org", "AAAA", "2001:db8::9")),
				ttlAndSet(collectortest.EP("nt.example.org", "CNAME", "lb.example.net"))}},
		{name: "an entry with targets keeps its own",
			cfg: defaults(false, "192.0.2.9"),
			entries: []map[string]any{collectortest.Entry("t.example.org", "CNAME", "placeholder.example.org"),
				collectortest.Entry("nt.example.org", "A")},
			want: []events.Endpoint{collectortest.EP("nt.example.org", "A", "192.0.2.9"),
				collectortest.EP("t.example.org", "CNAME", "placeholder.example.org")}},
		{name: "forced: every entry takes them, the same ones once",
			cfg: defaults(true, "192.0.2.9", "192.0.2.8"),
			entries: []map[string]any{collectortest.Entry("t.example.org", "CNAME", "placeholder.example.org"),
				collectortest.Entry("a.example.org", "A", "192.0.2.1"), collectortest.Entry("a.example.org", "AAAA", "2001:db8::1"),
				collectortest.Entry("example.org", "MX", "10 mail.example.org")},
			want: []events.Endpoint{collectortest.EP("a.example.org", "A", "192.0.2.8", "192.0.2.9"),
				collectortest.EP("example.org", "A", "192.0.2.8", "192.0.2.9"),
				collectortest.EP("t.example.org", "A", "192.0.2.8", "192.0.2.9")}},
		{name: "no default targets: an entry without targets is invalid",
			entries: []map[string]any{collectortest.Entry("nt.example.org", "A"), collectortest.Entry("ok.example.org", "A", "192.0.2.1")},
			want:    []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.1")}},
	})
}
