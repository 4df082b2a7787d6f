package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// TestSourcePerTypeGaugesFollowTheVector: ExternalDNS' gauges up to v0.17,
// external_dns_source_a_records and _aaaa_records, which the community
// dashboard reads, follow the record_type vector as objects come and go.
func TestSourcePerTypeGaugesFollowTheVector(t *testing.T) {
	a := events.NewEndpoint("a.example.org", "A", 0, "192.0.2.1")
	aaaa := events.NewEndpoint("a.example.org", "AAAA", 0, "2001:db8::1")
	var c endpointCounts
	check := func(step string, wantA, wantAAAA float64) {
		t.Helper()
		if got := testutil.ToFloat64(sourceByType["A"]); got != wantA {
			t.Errorf("%s: external_dns_source_a_records %v, want %v", step, got, wantA)
		}
		if got := testutil.ToFloat64(sourceByType["AAAA"]); got != wantAAAA {
			t.Errorf("%s: external_dns_source_aaaa_records %v, want %v", step, got, wantAAAA)
		}
	}
	c.set("svc/bytype-one", []events.Endpoint{a, aaaa})
	c.set("svc/bytype-two", []events.Endpoint{a})
	check("two objects", 2, 1)
	c.set("svc/bytype-one", nil)
	check("one gone", 1, 0)
}
