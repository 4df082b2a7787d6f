package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

func TestEndpointCountsFollowEachObjectsLastState(t *testing.T) {
	a := events.NewEndpoint("a.example.org", "A", 0, "192.0.2.1")
	aaaa := events.NewEndpoint("a.example.org", "AAAA", 0, "2001:db8::1")
	cname := events.NewEndpoint("b.example.org", "CNAME", 0, "a.example.org")
	var c endpointCounts
	check := func(step string, total int, byType map[string]int) {
		t.Helper()
		if got := testutil.ToFloat64(sourceEndpoints); got != float64(total) {
			t.Errorf("%s: %v endpoints, want %d", step, got, total)
		}
		for typ, n := range byType {
			if got := testutil.ToFloat64(sourceRecords.WithLabelValues(typ)); got != float64(n) {
				t.Errorf("%s: %v %s records, want %d", step, got, typ, n)
			}
		}
	}
	c.set("svc/one", []events.Endpoint{a, aaaa, a})
	c.set("svc/two", []events.Endpoint{cname})
	check("two objects", 4, map[string]int{"A": 2, "AAAA": 1, "CNAME": 1})
	c.set("svc/one", []events.Endpoint{aaaa})
	check("one object changed", 2, map[string]int{"A": 0, "AAAA": 1, "CNAME": 1})
	c.set("svc/two", nil)
	check("one object gone", 1, map[string]int{"A": 0, "AAAA": 1, "CNAME": 0})
	if len(c.objects) != 1 {
		t.Errorf("counts kept for %d objects, want 1", len(c.objects))
	}
}
