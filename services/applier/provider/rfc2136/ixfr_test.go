package rfc2136_test

import (
	"context"
	"testing"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestReadBackByIXFR reads back a few names after changes by zonestream
// and by hand (another type at a touched name, a deletion, a wildcard that
// a DNS query would answer for a name holding nothing), by IXFR from the
// copy of the last AXFR: it must agree with a full listing, name by name.
func TestReadBackByIXFR(t *testing.T) {
	const zone = "example.org"
	s := bind.StartT(t, zone)
	p := newProvider(t, s, nil)
	ctx := context.Background()
	if _, err := p.IXFR(ctx, zone, []string{"web.example.org"}); err == nil {
		t.Fatal("IXFR without a copy of the zone succeeded")
	}
	if _, err := p.Records(ctx, zone); err != nil {
		t.Fatal(err)
	}
	names := []string{"web.example.org", "api.example.org", "gone.example.org", "nothing.example.org", "*.example.org"}

	if err := p.Apply(ctx, zone, []events.Change{
		{New: ep("web.example.org", "A", 0, "192.0.2.1")},
		{New: ep("web.example.org", "TXT", 0, "owned")},
		{New: ep("api.example.org", "CNAME", 0, "web.example.org")},
		{New: ep("gone.example.org", "A", 0, "192.0.2.2")},
	}); err != nil {
		t.Fatal(err)
	}
	got := providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)
	if len(got) != 4 {
		t.Fatalf("read back %v, want 4 RRsets", got)
	}

	// By hand, in three UPDATEs: three IXFR steps.
	aaaa, _ := dns.NewRR("web.example.org. 300 IN AAAA 2001:db8::1")
	wild, _ := dns.NewRR("*.example.org. 300 IN A 192.0.2.9")
	gone, _ := dns.NewRR("gone.example.org. 300 IN A 192.0.2.2")
	for _, u := range []struct{ insert, remove []dns.RR }{{insert: []dns.RR{aaaa}}, {insert: []dns.RR{wild}}, {remove: []dns.RR{gone}}} {
		if err := s.Update(zone, u.insert, u.remove); err != nil {
			t.Fatal(err)
		}
	}
	got = providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)
	if len(got) != 5 { // web A, AAAA, TXT; api CNAME; the wildcard's own A
		t.Fatalf("read back %v, want 5 RRsets", got)
	}
	for _, ep := range got {
		if ep.DNSName == "gone.example.org" || ep.DNSName == "nothing.example.org" {
			t.Fatalf("read back %v at a name that holds nothing", ep)
		}
	}
	// Nothing changed: an IXFR of the SOA alone.
	providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)

	// A copy older than the server's history: answered in AXFR form.
	p.SetCopySerial(zone, 0)
	providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)
	providertest.ReadBackAgrees(t, p, zone, names, p.RecordsAt)
}
