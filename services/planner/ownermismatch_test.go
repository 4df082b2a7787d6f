package planner

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestOwnerMismatchIsCountedAsExternalDNS: a wanted record that another
// owner's ownership record covers is left alone and counted in ExternalDNS'
// external_dns_registry_skipped_records_owner_mismatch_per_sync, by type,
// owners and apex domain; once the other owner's claim is gone, the name
// no longer counts.
func TestOwnerMismatchIsCountedAsExternalDNS(t *testing.T) {
	_, js := startBus(t)
	name := "web.sub." + zone
	zones(t, js, zone)
	gauge := ownerMismatches.WithLabelValues("A", "me", "other", "example.test")
	before := testutil.ToFloat64(gauge)
	runPlanner(t, js, Config{})
	held(t, js, rr(name, "A", 300, "192.0.2.9"), rr("a-"+name, "TXT", 300, owned("other", "service/default/web")))
	wanted(t, js, rr(name, "A", 0, "192.0.2.1"))
	waitUntil(t, "the other owner's A counted", func() bool { return testutil.ToFloat64(gauge) == before+1 })

	held(t, js, rr(name, "A", 300, "192.0.2.9"))
	held(t, js, rr("a-"+name, "TXT", 300, owned("me", "service/default/web")))
	waitUntil(t, "the A no longer counted", func() bool { return testutil.ToFloat64(gauge) == before })
}
