package rfc2136_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
)

// Addresses are built without a zone file line; what RRs returns must be
// what parsing the line returned, and refused where it was refused.
func TestAddressRecordsAreWhatTheZoneFileLineGives(t *testing.T) {
	targets := []string{"10.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "2001:db8::10", "::ffff:10.0.0.1",
		"1.2.3", "01.2.3.4", "10.0.0.256", "fe80::1%eth0", " 10.0.0.1", "10.0.0.1 ", "10.0.0.1;x", "", "a.b.c.d", "2001:db8::g"}
	for _, rtype := range []string{"A", "AAAA"} {
		for _, target := range targets {
			ep := events.Endpoint{DNSName: "www.example.org", RecordType: rtype, Targets: []string{target}}
			got, gotErr := rfc2136.RRs(ep, 300)
			want, wantErr := dns.NewRR(fmt.Sprintf("www.example.org. 300 IN %s %s", rtype, target))
			if (gotErr != nil) != (wantErr != nil || want == nil) {
				t.Errorf("%s %q: RRs error %v, the zone file line's %v", rtype, target, gotErr, wantErr)
				continue
			}
			if gotErr == nil && (len(got) != 1 || !reflect.DeepEqual(got[0], want)) {
				t.Errorf("%s %q: RRs gave %v, the zone file line %v", rtype, target, got, want)
			}
		}
	}
}

func BenchmarkRRs(b *testing.B) {
	ep := events.Endpoint{DNSName: "svc-1.example.org", RecordType: "A", Targets: []string{"10.1.0.1"}}
	for b.Loop() {
		if _, err := rfc2136.RRs(ep, 300); err != nil {
			b.Fatal(err)
		}
	}
}
