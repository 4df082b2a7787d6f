package planner

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// external_dns_controller_verified_records counts, by type, the records the
// objects want that a provider holds at the same name and type, as
// ExternalDNS' controller does; it follows the desired and observed
// states as they change, and a planner that stops takes its count back.
func TestVerifiedRecordsMetric(t *testing.T) {
	_, js := startBus(t)
	zones(t, js, zone)
	verified := func(typ string) float64 { return testutil.ToFloat64(verifiedRecords.WithLabelValues(typ)) }
	// ExternalDNS' gauges up to v0.17, one per type.
	legacy := func(typ string) float64 { return testutil.ToFloat64(verifiedByType[typ]) }
	baseA, baseAAAA := verified("A"), verified("AAAA")
	legacyA, legacyAAAA := legacy("A"), legacy("AAAA")
	waitFor := func(what string, a, aaaa float64) {
		t.Helper()
		waitUntil(t, what, func() bool {
			return verified("A")-baseA == a && verified("AAAA")-baseAAAA == aaaa &&
				legacy("A")-legacyA == a && legacy("AAAA")-legacyAAAA == aaaa
		})
	}
	www, api := "www."+zone, "api."+zone
	_, stop := runPlannerUntil(t, js, Config{})
	wanted(t, js, rr(www, "A", 300, "192.0.2.1"), rr(www, "AAAA", 300, "2001:db8::1"))
	wanted(t, js, rr(api, "A", 300, "192.0.2.2"))
	waitFor("nothing held: nothing verified", 0, 0)
	held(t, js, rr(www, "A", 300, "192.0.2.9"), rr(api, "A", 300, "192.0.2.2"))
	waitFor("two A held", 2, 0)
	held(t, js, rr(www, "A", 300, "192.0.2.9"), rr(www, "AAAA", 300, "2001:db8::1"))
	waitFor("the AAAA held too", 2, 1)
	publish(t, js, events.DesiredSubject(api), &events.DesiredState{DNSName: api})
	waitFor("api no longer wanted", 1, 1)
	stop()
	waitFor("the planner stopped", 0, 0)
}
