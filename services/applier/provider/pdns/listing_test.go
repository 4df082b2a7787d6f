package pdns_test

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// TestListingAtRest proves, against a real PowerDNS, that listing an
// unchanged zone does not download it, that an out-of-band edit through the
// API is still in the next listing, and that every Nth listing downloads
// the zone whatever its serial.
func TestListingAtRest(t *testing.T) {
	const zone = "example.org"
	s := pdnsenv.StartT(t, zone)
	p := newProvider(t, s, func(c *pdns.Config) { c.FullListingEvery = 4 })
	list := func() []events.Endpoint {
		t.Helper()
		eps, err := p.Records(t.Context(), zone)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	targets := func(eps []events.Endpoint, name, typ string) []string {
		for _, e := range eps {
			if e.DNSName == name && e.RecordType == typ {
				return e.Targets
			}
		}
		return nil
	}
	if err := s.Plant(zone, "www.example.org", "A", 300, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	first := list()
	if got := p.Downloads(); got != 1 {
		t.Fatalf("first listing: %d downloads, want 1", got)
	}
	second := list()
	if got := p.Downloads(); got != 1 {
		t.Fatalf("unchanged zone listed again: %d downloads, want still 1", got)
	}
	same := func(a, b events.Endpoint) bool { return a.Key() == b.Key() && slices.Equal(a.Targets, b.Targets) }
	if !slices.EqualFunc(first, second, same) {
		t.Fatalf("listing from the last download differs:\n%v\n%v", first, second)
	}

	if err := s.Plant(zone, "www.example.org", "A", 300, "192.0.2.2"); err != nil {
		t.Fatal(err)
	}
	third := list()
	if got := targets(third, "www.example.org", "A"); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("out-of-band change not seen: www A %v", got)
	}
	if got := p.Downloads(); got != 2 {
		t.Fatalf("changed zone: %d downloads, want 2", got)
	}
	if got := list(); !slices.EqualFunc(got, third, same) || p.Downloads() != 2 {
		t.Fatalf("unchanged again: %d downloads, listing %v", p.Downloads(), got)
	}
	list()
	list()
	if got := p.Downloads(); got != 2 {
		t.Fatalf("3 listings of an unchanged zone: %d downloads, want still 2", got)
	}
	list() // the 4th listing since the last download: a full one
	if got := p.Downloads(); got != 3 {
		t.Fatalf("safety net: %d downloads, want 3", got)
	}
}
