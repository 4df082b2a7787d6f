package rfc2136_test

import (
	"context"
	"fmt"
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
	// Enough records that BIND answers a few changes incrementally: it
	// sends the whole zone instead when the differences are larger than
	// the zone (max-ixfr-ratio).
	var fill []dns.RR
	for i := range 50 {
		rr, _ := dns.NewRR(fmt.Sprintf("fill-%d.example.org. 300 IN A 192.0.2.%d", i, 100+i))
		fill = append(fill, rr)
	}
	if err := s.Update(zone, fill, nil); err != nil {
		t.Fatal(err)
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

	// By hand, in four UPDATEs: four IXFR steps. The last changes only a
	// TTL, which IXFR sends as the RR's deletion with the old TTL and its
	// addition with the new one: still one RR in the copy.
	aaaa, _ := dns.NewRR("web.example.org. 300 IN AAAA 2001:db8::1")
	wild, _ := dns.NewRR("*.example.org. 300 IN A 192.0.2.9")
	gone, _ := dns.NewRR("gone.example.org. 300 IN A 192.0.2.2")
	shorter, _ := dns.NewRR("WEB.example.org. 60 IN A 192.0.2.1")
	for _, u := range []struct{ insert, remove []dns.RR }{{insert: []dns.RR{aaaa}}, {insert: []dns.RR{wild}}, {remove: []dns.RR{gone}}, {insert: []dns.RR{shorter}}} {
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
		if ep.DNSName == "web.example.org" && ep.RecordType == "A" && (ep.RecordTTL != 60 || len(ep.Targets) != 1) {
			t.Fatalf("read back %v, want web's one A at TTL 60", ep)
		}
	}
	// Nothing changed: an IXFR of the SOA alone.
	providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)

	if n := p.IXFRsInFull(); n != 0 {
		t.Fatalf("%d IXFR answers in AXFR form, want every one incremental", n)
	}

	// A copy older than the server's history: answered in AXFR form.
	p.SetCopySerial(zone, 0)
	providertest.ReadBackAgrees(t, p, zone, names, p.IXFR)
	if n := p.IXFRsInFull(); n != 1 {
		t.Fatalf("%d IXFR answers in AXFR form, want 1", n)
	}
	providertest.ReadBackAgrees(t, p, zone, names, p.RecordsAt)
}
