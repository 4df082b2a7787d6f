package applier_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestNameDNSCannotCarryFailsOnlyItsChange: one change in a plan of 50 has
// a name with a 66-octet label (an ownership record "cname-<60 octets>").
// It can never be sent, so it is a permanent failure of that change alone:
// the 49 others are applied (result partial), instead of the whole UPDATE
// failing as transient again and again.
func TestNameDNSCannotCarryFailsOnlyItsChange(t *testing.T) {
	b := bind.StartT(t, zone)
	js := bus(t)
	start(t, js, rfcConfig(b, time.Hour))
	long := "cname-" + strings.Repeat("x", 60) + "." + zone
	var changes []events.Change
	for i := range 49 {
		changes = append(changes, events.Change{New: ep(fmt.Sprintf("n%d.%s", i, zone), "A", "192.0.2.1")})
	}
	changes = slices.Insert(changes, 20, events.Change{New: ep(long, "TXT", "heritage=external-dns,external-dns/owner=default")})
	if _, _, err := events.Publish(context.Background(), js, events.PlanSubject("rfc2136", zone),
		&events.Plan{ID: "long", Provider: "rfc2136", Zone: zone, Changes: changes}, ""); err != nil {
		t.Fatal(err)
	}
	res, _ := waitResult(t, js, "long")
	if res.Status != events.ResultPartial || res.Applied != 49 || len(res.Failed) != 1 || res.Failed[0].Change.Key().DNSName != long {
		t.Fatalf("result: status %s, applied %d, failed %d (%s); want partial, 49, the long name alone", res.Status, res.Applied, len(res.Failed), res.Error)
	}
	if got := providertest.Answers(t, b, "n48."+zone, dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("n48: %v", got)
	}
}
